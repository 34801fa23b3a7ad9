// Package bounded reads input files with a size limit, so that a scenario,
// schedule or report file that is far too large (or endless, such as
// /dev/zero) is refused with a message naming the file and the limit
// instead of filling memory. It knows nothing of what the files hold.
package bounded
