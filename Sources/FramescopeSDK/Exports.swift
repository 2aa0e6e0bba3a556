// `import FramescopeSDK` alone is enough for everything an app writes: the SDK's public API
// takes and returns the engine's types (`AppInfo`, `DeviceInfo`, `FrameReport`,
// `ScreenVisitEvent`, `VisitContext`…, FramescopeCore) and Foundation's (`URL`, `Data`),
// so both come with it (docs/sdk.md; every Swift sample in the docs is compiled with this
// one import, scripts/check-doc-samples).
@_exported import FramescopeCore
@_exported import Foundation
