// libFuzzer entry point for the SettingsPlist readers. Built by Fuzz/run.sh together with the
// module's sources, with -D FUZZ_XML or -D FUZZ_BINARY choosing the reader under test.
//
// Properties checked on every input:
// - the reader returns a value or throws PlistError; it never traps, hangs or exhausts memory;
// - a value that was read writes as binary and reads back equal (exact, NaN == NaN);
// - a value that was read either writes as XML and reads back, or is refused as unencodable.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOneInput(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = UnsafeBufferPointer(start: data, count: size)
    let options = PlistReadOptions(maximumDepth: 512)
    let value: PlistValue
    do {
        #if FUZZ_BINARY
        value = try BinaryPlistReader.read(input, options: options)
        #else
        value = try XMLPlistReader.read(input, options: options)
        #endif
    } catch {
        _ = error.description
        return 0
    }
    do {
        let binary = try BinaryPlistWriter.write(value)
        let again = try binary.withUnsafeBufferPointer { buffer throws(PlistError) in
            try BinaryPlistReader.read(buffer, options: options)
        }
        if again != value { fatalError("binary round trip changed the value: \(value) -> \(again)") }
    } catch {
        fatalError("binary round trip failed: \(error)")
    }
    do {
        let xml = try XMLPlistWriter.write(value)
        _ = try xml.withUnsafeBufferPointer { buffer throws(PlistError) in
            try XMLPlistReader.read(buffer, options: options)
        }
    } catch where error.code == .unencodable {
        return 0
    } catch {
        fatalError("XML output could not be read back: \(error)")
    }
    return 0
}
