package pluginbuild

import (
	"os"
	"testing"
)

// Missing reports a build or test tool that is not installed. A developer's run skips the test
// with how to install it; a CI run (CI set in the environment, as CI services and .ci/run do)
// fails it instead, so a broken install step cannot hide behind a skip.
func Missing(tb testing.TB, what, install string) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s is not installed, and CI must run this test: %s", what, install)
	}
	tb.Skipf("%s is not installed: %s", what, install)
}
