// Package npminstall runs `npm install` for the real packages' directories
// (realengine, realworld/node) so that a Ctrl-C neither orphans npm nor
// leaves a half-written tree that passes for installed: npm runs in its own
// process group, killed as a group when the context ends, and a marker in
// node_modules says the tree is unfinished until npm has succeeded.
package npminstall
