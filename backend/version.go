package backend

// Version is ducklm's version, set at build time with
// -ldflags "-X ducklm/backend.Version=...".
var Version = "0.1.0-dev"
