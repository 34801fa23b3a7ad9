package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/simlab/simlab/realengine"
	"github.com/simlab/simlab/realengine/findings"
)

func newReleasesCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "releases",
		Short: "List the real runtime's releases validate runs, judge the findings on each, add one published later",
		Long: `List the @workflow/core, @workflow/builders and @workflow/world-local releases
realengine/package.json installs side by side (npm aliases, exact pins):
the releases simlab validate and simlab releases matrix run. docs/RELEASES.md
says what each docs/FINDINGS.md finding does on each release.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cat, err := readCatalog(&dir)
			if err != nil {
				return err
			}
			printCatalog(cmd.OutOrStdout(), cat)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "engine-dir", "", "the realengine directory (default: found from the working directory upwards)")
	cmd.AddCommand(newReleasesMatrixCommand(), newReleasesAddCommand())
	return cmd
}

func readCatalog(dir *string) (*realengine.Catalog, error) {
	if *dir == "" {
		d, err := realengine.FindDir()
		if err != nil {
			return nil, badInput(err)
		}
		*dir = d
	}
	cat, err := realengine.ReadCatalog(*dir)
	if err != nil {
		return nil, badInput(fmt.Errorf("%s: %w", *dir, err))
	}
	return cat, nil
}

func printCatalog(w io.Writer, cat *realengine.Catalog) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PACKAGE\tVERSION\tINSTALLED AS\tCOMPILED BY")
	for _, c := range cat.Cores {
		by := c.BuildersPackage()
		if c.Builders == "" {
			by += " (none of its version installed)"
		}
		fmt.Fprintf(tw, "@workflow/core\t%s\t%s\t%s\n", c.Version, c.Package(), by)
	}
	for _, wl := range cat.WorldLocals {
		fmt.Fprintf(tw, "@workflow/world-local\t%s\t%s\t\n", wl.Version, wl.Package())
	}
	tw.Flush()
}

// matrixFlags are the matrix's flags, shared by matrix and add.
type matrixFlags struct {
	cores, wls []string
	o          findings.MatrixOptions
	noInstall  bool
	asJSON     bool
}

func (f *matrixFlags) register(cmd *cobra.Command, coresDefault []string) {
	cmd.Flags().StringSliceVar(&f.cores, "cores", coresDefault, "@workflow/core versions to judge, or all (every core package.json installs)")
	cmd.Flags().StringSliceVar(&f.wls, "world-local", []string{realengine.All}, "@workflow/world-local releases each core runs over, or all")
	var ids []string
	for _, f := range findings.Findings {
		ids = append(ids, f.ID)
	}
	cmd.Flags().StringSliceVar(&f.o.Findings, "findings", nil, "judge only these findings: "+strings.Join(ids, ", ")+" (default all)")
	cmd.Flags().IntVar(&f.o.Branches, "branches", 48, "width of the unforced check's fan-outs (lazy-reads, double-end-unforced)")
	cmd.Flags().IntVar(&f.o.Repetitions, "repetitions", 5, "real runs of the unforced check per release")
	cmd.Flags().Float64Var(&f.o.TimeScale, "time-scale", 5, "the unforced check's time scale over durabench-256's store")
	cmd.Flags().DurationVar(&f.o.Timeout, "timeout", 3*time.Minute, "longest one real run may take before it is stopped and reported")
	cmd.Flags().BoolVar(&f.noInstall, "no-install", false, "do not install the pinned packages when they are missing; say what to run instead")
	cmd.Flags().BoolVar(&f.asJSON, "json", false, "print the matrix as JSON")
}

// check refuses bad input before anything runs.
func (f *matrixFlags) check(cat *realengine.Catalog) ([]realengine.Release, error) {
	cores, err := cat.ExpandCores(f.cores)
	if err != nil {
		return nil, badInput(fmt.Errorf("--cores: %w", err))
	}
	wls, err := cat.ExpandWorldLocals(f.wls)
	if err != nil {
		return nil, badInput(fmt.Errorf("--world-local: %w", err))
	}
	if len(cores) == 0 {
		return nil, badInput(errors.New("--cores is empty: name a core or all"))
	}
	for _, id := range f.o.Findings {
		if _, err := findings.FindingByID(id); err != nil {
			return nil, badInput(fmt.Errorf("--findings: %w", err))
		}
	}
	switch {
	case f.o.Branches < 1 || f.o.Branches > realengine.MaxBranches:
		return nil, badInput(fmt.Errorf("--branches %d: want 1..%d", f.o.Branches, realengine.MaxBranches))
	case f.o.Repetitions < 1:
		return nil, badInput(fmt.Errorf("--repetitions %d: want at least 1", f.o.Repetitions))
	case !(f.o.TimeScale >= 1 && f.o.TimeScale <= 100):
		return nil, badInput(fmt.Errorf("--time-scale %v: want a factor between 1 and 100", f.o.TimeScale))
	case f.o.Timeout <= 0:
		return nil, badInput(fmt.Errorf("--timeout %v: want a positive duration", f.o.Timeout))
	}
	var rels []realengine.Release
	for _, c := range cores {
		for _, w := range wls {
			rels = append(rels, realengine.Release{Core: c, WorldLocal: w})
		}
	}
	return rels, nil
}

// run prepares the engine and runs the matrix over rels, printing it.
func (f *matrixFlags) run(cmd *cobra.Command, dir string, cat *realengine.Catalog, rels []realengine.Release) error {
	ctx, interrupted, release := onInterrupt(cmd.Context())
	defer release()
	r := &realengine.Runner{Dir: dir, Log: cmd.ErrOrStderr(), Catalog: cat}
	defer r.Close()
	var cores []realengine.Core
	for _, rel := range rels {
		if len(cores) == 0 || cores[len(cores)-1] != rel.Core {
			cores = append(cores, rel.Core)
		}
	}
	if err := r.Prepare(ctx, !f.noInstall, cores...); err != nil {
		if ctx.Err() != nil {
			return interruptError(interrupted(), "stopped while preparing the real engine (installing its packages or compiling the workflow); nothing was judged")
		}
		return err
	}
	bar := progress(cmd.ErrOrStderr(), "judging")
	o := f.o
	o.Progress = func(done, total int) {
		if bar != nil {
			bar(done, total)
		}
	}
	res, err := findings.Matrix(ctx, r, rels, o)
	if err != nil {
		if res != nil && len(res.Cells) > 0 {
			printMatrix(cmd.OutOrStdout(), res)
		}
		if ctx.Err() != nil {
			return interruptError(interrupted(), fmt.Sprintf("%d cells judged before it (printed above): %v", len(res.Cells), err))
		}
		return err
	}
	if f.asJSON {
		return writeJSON(cmd.OutOrStdout(), res)
	}
	printMatrix(cmd.OutOrStdout(), res)
	return nil
}

func newReleasesMatrixCommand() *cobra.Command {
	var f matrixFlags
	var dir string
	cmd := &cobra.Command{
		Use:   "matrix",
		Short: "Judge each docs/FINDINGS.md finding on each real release (holds, fixed, n/a), by real runs",
		Long: `Run each docs/FINDINGS.md finding's check on every release (each --cores core over each
--world-local release, as realengine/package.json installs them) and print
the table: holds, fixed, n/a (the release does not take the finding's path), not
seen (an unforced finding these runs did not meet) or undecided (a forced race
that could not be forced), with what each run measured. Every cell is a real
run of that release: the unforced check runs durabench-256's store at --branches
(--repetitions runs, ×--time-scale), the forced ones the gate and the race of
go test ./realengine/findings (realengine/findings/registry.go lists them). docs/RELEASES.md
is filled from it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cat, err := readCatalog(&dir)
			if err != nil {
				return err
			}
			rels, err := f.check(cat)
			if err != nil {
				return err
			}
			return f.run(cmd, dir, cat, rels)
		},
	}
	f.register(cmd, []string{realengine.All})
	cmd.Flags().StringVar(&dir, "engine-dir", "", "the realengine directory (default: found from the working directory upwards)")
	return cmd
}

// npmCommand is npm, found on PATH (a test puts a fake first).
func npmCommand(ctx context.Context, dir string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Dir = dir
	return cmd
}

// npmPublished asks the registry (npm view) whether package@version is
// published: a 404 is no, any other failure an error.
func npmPublished(ctx context.Context, dir string) realengine.Published {
	return func(pkg, v string) (bool, error) {
		var out, errb bytes.Buffer
		cmd := npmCommand(ctx, dir, "view", pkg+"@"+v, "version")
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		switch {
		case err == nil:
			return strings.TrimSpace(out.String()) == v, nil
		case strings.Contains(errb.String(), "E404"):
			return false, nil
		default:
			return false, fmt.Errorf("npm view %s@%s: %v\n%s", pkg, v, err, tail(errb.String(), 800))
		}
	}
}

func newReleasesAddCommand() *cobra.Command {
	var f matrixFlags
	var dir string
	var addWLs []string
	var noMatrix bool
	cmd := &cobra.Command{
		Use:   "add [CORE_VERSION]",
		Short: "Install a release published later side by side, run the matrix on it, print the table",
		Long: `Install a @workflow/core release published after this checkout (and the
@workflow/builders of its version, when the registry has one) and/or the
--add-world-local releases into realengine beside the pinned ones, as
npm aliases of exact versions (core-b57, builders-b57, wl-b47: package.json and
its lock file change; commit them), then run simlab releases matrix over the
releases --cores and --world-local name (by default every core over every
world-local, the new ones included) and print the table. Versions must be exact
(5.0.0-beta.57), published, and not installed yet: that is checked before
anything is installed, and the npm command is printed.`,
		Example: `  simlab releases add 5.0.0-beta.57
  simlab releases add 5.0.0-beta.57 --add-world-local 5.0.0-beta.47
  simlab releases add --add-world-local 5.0.0-beta.47 --cores 5.0.0-beta.55`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cat, err := readCatalog(&dir)
			if err != nil {
				return err
			}
			core := ""
			if len(args) == 1 {
				core = args[0]
			}
			// Refuse what no registry can answer before asking it.
			if core != "" && !realengine.ValidVersion(core) {
				return badInput(fmt.Errorf("core %q: want an exact version such as 5.0.0-beta.57 (no range, no tag)", core))
			}
			for _, v := range addWLs {
				if !realengine.ValidVersion(v) {
					return badInput(fmt.Errorf("--add-world-local %q: want an exact version such as 5.0.0-beta.47 (no range, no tag)", v))
				}
			}
			if _, err := exec.LookPath("npm"); err != nil {
				return fmt.Errorf("npm not found on PATH: simlab releases add installs the release with npm")
			}
			plan, err := realengine.PlanAdd(cat, core, addWLs, npmPublished(cmd.Context(), dir))
			if err != nil {
				return badInput(err)
			}
			args = plan.InstallArgs()
			fmt.Fprintf(cmd.ErrOrStderr(), "installing in %s: npm %s\n", dir, strings.Join(args, " "))
			if plan.NoBuilders {
				fmt.Fprintf(cmd.ErrOrStderr(), "@workflow/builders %s is not published: the default @workflow/builders compiles its workflow\n", core)
			}
			var out bytes.Buffer
			inst := npmCommand(cmd.Context(), dir, args...)
			inst.Stdout, inst.Stderr = &out, &out
			if err := inst.Run(); err != nil {
				return fmt.Errorf("npm %s in %s: %w\n%s", strings.Join(args, " "), dir, err, tail(out.String(), 2000))
			}
			if cat, err = realengine.ReadCatalog(dir); err != nil {
				return err
			}
			if plan.Core != nil {
				if _, err := cat.Core(plan.Core.Version); err != nil {
					return fmt.Errorf("npm install finished but package.json does not install core %s: %w", plan.Core.Version, err)
				}
			}
			printCatalog(cmd.ErrOrStderr(), cat)
			if noMatrix {
				return nil
			}
			rels, err := f.check(cat)
			if err != nil {
				return err
			}
			return f.run(cmd, dir, cat, rels)
		},
	}
	f.register(cmd, []string{realengine.All})
	cmd.Flags().StringSliceVar(&addWLs, "add-world-local", nil, "also install these @workflow/world-local releases (exact versions)")
	cmd.Flags().BoolVar(&noMatrix, "no-matrix", false, "install only; do not run the matrix")
	cmd.Flags().StringVar(&dir, "engine-dir", "", "the realengine directory (default: found from the working directory upwards)")
	return cmd
}

// printMatrix prints the findings × releases table, then each cell's
// evidence.
func printMatrix(w io.Writer, res *findings.MatrixResult) {
	fmt.Fprintf(w, "each finding (docs/FINDINGS.md) on each real release, by real runs (%.0f s); b55/wl46: core beta.55 over world-local beta.46\n\n", res.Seconds)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	head := []string{"FINDING"}
	for _, r := range res.Releases {
		head = append(head, compactVersion(r.Core)+"/wl"+strings.TrimPrefix(compactVersion(r.WorldLocal), "b"))
	}
	fmt.Fprintln(tw, strings.Join(head, "\t")+"\t")
	for _, f := range res.Findings {
		line := []string{f.ID}
		for _, r := range res.Releases {
			v := "-"
			if c, ok := res.Cell(f.ID, r.Core, r.WorldLocal); ok {
				v = string(c.Verdict)
			}
			line = append(line, v)
		}
		fmt.Fprintln(tw, strings.Join(line, "\t")+"\t")
	}
	tw.Flush()
	for _, f := range res.Findings {
		fmt.Fprintf(w, "\n%s: %s\n", f.ID, f.Title)
		for _, r := range res.Releases {
			if c, ok := res.Cell(f.ID, r.Core, r.WorldLocal); ok {
				fmt.Fprintf(w, "  core %s / world-local %s: %s (%.0f s): %s\n", shortVersion(c.Core), shortVersion(c.WorldLocal), c.Verdict, c.Seconds, c.Evidence)
			}
		}
	}
}

// tail keeps the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// compactVersion writes 5.0.0-beta.55 as b55, anything else as
// shortVersion does.
func compactVersion(v string) string {
	if n, ok := strings.CutPrefix(v, "5.0.0-beta."); ok {
		return "b" + n
	}
	return shortVersion(v)
}
