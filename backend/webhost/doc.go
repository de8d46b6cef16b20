// Package webhost is what policy knows of a web address: a step's URL read
// into its host (ParseURL, Host), whether that host names this machine or a
// private network by itself (LocalHost, Classify), the hosts a step may
// reach (Grant) and the shape of an allow-list entry (CheckAllowedHost).
//
// It is pure: no I/O, no resolution, no clock. The router computes a step's
// Grant from it without importing the package that dials (backend/web), and
// backend/web enforces the same Grant when it connects. It must never import
// anything that executes.
package webhost
