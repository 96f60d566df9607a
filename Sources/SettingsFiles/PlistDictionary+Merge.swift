package import SettingsPlist

extension PlistDictionary {
    /// This dictionary laid over `lower`: keys of both, this one's values winning, and where both
    /// hold a dictionary, the two merged the same way (TFOptionsKit's deep merge).
    package func merged(over lower: PlistDictionary) -> PlistDictionary {
        var out = lower
        for (key, value) in self {
            if case .dictionary(let mine) = value, case .dictionary(let theirs)? = out[key] {
                out[key] = .dictionary(mine.merged(over: theirs))
            } else {
                out[key] = value
            }
        }
        return out
    }
}
