package starlark

// PortableLog exposes portableLog to the external tests.
var PortableLog = portableLog
