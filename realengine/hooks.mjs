// Module resolution hook: with SIMLAB_CORE_ALIAS set (for example core-b50),
// every import of @workflow/core, from the harness, the compiled bundles or the
// `workflow` package, resolves to that npm alias instead, so one install holds
// both runtimes side by side and a process runs exactly one of them.
const alias = process.env.SIMLAB_CORE_ALIAS;

export async function resolve(specifier, context, nextResolve) {
  if (alias && (specifier === '@workflow/core' || specifier.startsWith('@workflow/core/'))) {
    return nextResolve(alias + specifier.slice('@workflow/core'.length), context);
  }
  return nextResolve(specifier, context);
}
