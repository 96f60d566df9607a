import Testing
@testable import SettingsPlist
