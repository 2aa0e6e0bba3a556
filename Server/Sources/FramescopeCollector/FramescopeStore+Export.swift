// The collector is HTTP and SQLite around the rules and values of `FramescopeStore`; what
// imports the collector sees them too, as it did when they lived here (issue 44, item 1).
@_exported import FramescopeStore
