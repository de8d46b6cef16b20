package cli

import "ducklm/backend/api"

// window opens the desktop window and returns its exit code; main sets it
// (the CLI itself knows nothing of Wails).
var window func(open api.OpenRequest) int

// SetWindow sets how `ducklm open` opens the window.
func SetWindow(open func(api.OpenRequest) int) { window = open }

func init() {
	register("open", "open the window at a screen, run or world (brings a running window forward)", api.OpenUsage, runOpen)
}

func runOpen(env Env, args []string) error {
	req, err := api.ParseOpen(args)
	if err != nil {
		return err
	}
	if window == nil {
		return usageError("this ducklm was built without its window; run the desktop build")
	}
	if code := window(req); code != 0 {
		return errExit{code}
	}
	return nil
}
