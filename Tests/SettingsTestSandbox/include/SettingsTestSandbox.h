#ifndef SETTINGS_TEST_SANDBOX_H
#define SETTINGS_TEST_SANDBOX_H

/// The directory the test process's `XDG_CONFIG_HOME` was pointed at when the process started,
/// before any test ran (so `SettingsStore.shared` and every store at its default place live in
/// it, never in the user's home); empty when it could not be made.
const char *settings_test_sandbox_config_home(void);

/// The test process's working directory when it started, before any test could change it (the
/// guides' runs do, for the whole process, while they run); empty when it could not be read.
const char *settings_test_start_directory(void);

#endif
