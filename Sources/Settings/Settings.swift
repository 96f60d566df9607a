// The Settings library: store, wrappers, transformers, persistence. Built on SettingsPlist.
@_exported public import SettingsPlist
