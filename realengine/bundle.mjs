// compileBundles compiles the workflow source files of DIR with the
// @workflow/builders package BUILDERS, as the repository's own integration
// does (a BaseBuilder, createStepsBundle and createWorkflowsBundle, the
// standalone target): DIR/steps.mjs registers the step functions, DIR/
// workflows.mjs holds the workflow code and its queue handler. Non-step
// imports stay external, so the runtime that executes them is whichever
// DIR's node_modules resolves. It returns the versions of the builders and
// of the core the bundles were compiled against (DIR's node_modules, which
// the caller lays out first, else a link to this directory's).
import { mkdir, readFile, symlink } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

export async function compileBundles(dir, buildersPkg, files) {
  const { BaseBuilder } = await import(buildersPkg);
  class Builder extends BaseBuilder {
    async build() {}
  }
  await mkdir(dir, { recursive: true });
  await symlink(path.join(here, 'node_modules'), path.join(dir, 'node_modules')).catch((e) => {
    if (e.code !== 'EEXIST') throw e;
  });
  const b = new Builder({
    dirs: ['.'], workingDir: dir, buildTarget: 'standalone',
    stepsBundlePath: 'steps.mjs', workflowsBundlePath: 'workflows.mjs', webhookBundlePath: 'webhook.mjs',
    suppressCreateWorkflowsBundleLogs: true, suppressCreateWorkflowsBundleWarnings: true,
  });
  const inputFiles = files.map((f) => path.join(dir, f));
  process.chdir(dir); // swc keeps its plugin cache in ./.swc: the build dir, not the source tree
  const log = console.log;
  console.log = () => {}; // the builder's progress lines would mix with the caller's output
  try {
    await b.createStepsBundle({ inputFiles, outfile: path.join(dir, 'steps.mjs'), externalizeNonSteps: true });
    await b.createWorkflowsBundle({ inputFiles, outfile: path.join(dir, 'workflows.mjs'), bundleFinalOutput: false });
  } finally {
    console.log = log;
  }
  const version = async (p) => JSON.parse(await readFile(p, 'utf8')).version;
  return {
    builders: await version(path.join(here, 'node_modules', buildersPkg, 'package.json')),
    bundleCore: await version(path.join(dir, 'node_modules', '@workflow', 'core', 'package.json')),
  };
}
