// The test process's configuration directory, set before any test runs.
//
// `SettingsStore.shared` fixes its path the first time anything names it (every `@Setting`
// without `store:` does), from `XDG_CONFIG_HOME`. Swift Testing has no hook that runs before
// every test of every target, so a constructor of the test binary sets the variable when the
// process starts: whichever test runs first, with or without `--filter`, the shared store is in
// a directory of this process's own, never in the user's home. The Swift side
// (`GuideRun.sharedConfigHome`) removes the directory at exit.
#include "SettingsTestSandbox.h"
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char sandbox[4096];
static char start_directory[4096];

__attribute__((constructor)) static void settings_test_sandbox_set_up(void) {
    if (getcwd(start_directory, sizeof start_directory) == NULL) start_directory[0] = '\0';
    const char *tmp = getenv("TMPDIR");
    if (tmp == NULL || tmp[0] == '\0') tmp = "/tmp";
    int n = snprintf(sandbox, sizeof sandbox, "%s/settings-tests-XXXXXX", tmp);
    if (n <= 0 || (size_t)n >= sizeof sandbox || mkdtemp(sandbox) == NULL) {
        sandbox[0] = '\0';
        return;
    }
    setenv("XDG_CONFIG_HOME", sandbox, 1);
}

const char *settings_test_sandbox_config_home(void) { return sandbox; }

const char *settings_test_start_directory(void) { return start_directory; }
