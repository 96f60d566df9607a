// The Settings library: store, wrappers, transformers, persistence. Built on SettingsPlist (the
// codec) and SettingsFiles (a settings file on disk), which it re-exports: `import Settings` is enough.
@_exported public import SettingsPlist
@_exported public import SettingsFiles
