// settings-startup: the smallest real use of a settings file, for whole-process start-up timing
// (settings-bench's "startup" rows): open a settings file, read one value, print it, exit.
//   settings-startup FILE KEY
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import Settings

let arguments = CommandLine.arguments
guard arguments.count == 3 else {
    print("usage: settings-startup FILE KEY")
    exit(2)
}
let store = SettingsStore.file(URL(filePath: arguments[1]))
print(store[SettingsKey(arguments[2])]?.intValue ?? -1)
