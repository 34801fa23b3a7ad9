// Package conformance checks model/world against the real, published Worlds
// (issue 11): a Node driver (worlds/driver.mjs) hosts world-local 5.0.0-beta.46,
// beta.45 and beta.43 and world-postgres 5.0.0-beta.29 and beta.27 on a
// throwaway PostgreSQL, and
// a differential test applies the same rapid-generated World calls to the real
// World and to the model configured as that World, comparing every answer and
// every status read back. The real packages are the judge (docs/CONFORMANCE.md).
package conformance
