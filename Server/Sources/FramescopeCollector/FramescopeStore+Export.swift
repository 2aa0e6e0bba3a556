// The collector is HTTP around the rules and values of `FramescopeStore` and the SQLite store
// of `FramescopeSQLite`; what imports the collector sees them too, as it did when they lived
// here (issue 44, item 1).
@_exported import FramescopeSQLite
@_exported import FramescopeStore
