import Testing
import Settings
@Test func placeholder() { #expect(Bool(true)) }
