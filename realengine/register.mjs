// Loaded with `node --import ./register.mjs`: installs hooks.mjs before any
// package is resolved.
import { register } from 'node:module';

register('./hooks.mjs', import.meta.url);
