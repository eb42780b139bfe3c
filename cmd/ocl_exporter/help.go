package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/alecthomas/kingpin/v2"
)

// globalFlagUse lists, per global flag, the commands it applies to; a
// global flag not listed serves metrics and applies to the exporter
// alone. A command's --help lists only the global flags that apply to
// it (usageTemplate), and docs/flags.md says the same.
var globalFlagUse = map[string][]string{
	"help":            nil, // every command
	"version":         nil,
	"log.level":       nil,
	"log.format":      nil,
	"example":         nil,
	"kubeconfig":      {serveCommand, diagnoseCommand, captureCommand, reviewCommand},
	"snapshot":        {serveCommand, diagnoseCommand, captureCommand},
	"mco.namespace":   {serveCommand, diagnoseCommand, captureCommand},
	"now":             {serveCommand, diagnoseCommand},
	"web.runbook-url": {serveCommand, diagnoseCommand},
}

// appliesTo reports whether the global flag applies to command ("" or
// serve: the exporter, which takes them all).
func appliesTo(flag, command string) bool {
	if command == "" || command == serveCommand {
		return true
	}
	use, listed := globalFlagUse[flag]
	return listed && (use == nil || slices.Contains(use, command))
}

// flagsOf keeps the global flags that apply to the selected command.
func flagsOf(cmd *kingpin.CmdModel, flags []*kingpin.FlagModel) []*kingpin.FlagModel {
	var out []*kingpin.FlagModel
	for _, f := range flags {
		if appliesTo(f.Name, cmd.FullCommand) {
			out = append(out, f)
		}
	}
	return out
}

// listenAddressHelp replaces exporter-toolkit's help, whose examples
// name port 9100 (node_exporter's) while this exporter listens on 29100.
const listenAddressHelp = "Addresses on which to expose metrics and web interface. Repeatable for multiple addresses. Examples: `:29100` or `[::1]:29100` for http, `vsock://:29100` for vsock"

// expandHome expands a leading ~/ in each path: a shell does not expand
// it after = (--kubeconfig=~/.kube/config), and a file named ~ is never
// what was meant.
func expandHome(paths ...*string) error {
	for _, p := range paths {
		rest, ok := strings.CutPrefix(*p, "~/")
		switch {
		case *p == "~":
			rest = ""
		case !ok:
			continue
		}
		home, err := os.UserHomeDir()
		if err != nil {
			return err
		}
		*p = filepath.Join(home, rest)
	}
	return nil
}
