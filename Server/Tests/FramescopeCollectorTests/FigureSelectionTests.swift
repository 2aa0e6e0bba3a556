@testable import FramescopeCollector
import FramescopeCore
@testable import FramescopeSQLite
@testable import FramescopeStore
import Testing

/// The collector's statistics, thresholds and query routes select their figures from Core's
/// vocabulary (``Figure``): these tests hold each list to the registry.
@Suite("The collector's figures are the registry's")
struct FigureSelectionTests {
    @Test("The per-visit statistics are the registry's figures with a ratio, in storage-id order, under their names")
    func statistics() {
        #expect(VisitMetric.allCases.map(\.figure) == Figure.withRatio)
        #expect(VisitMetric.allCases.allSatisfy { $0.rawValue == $0.figure.name && $0.storageID == $0.figure.ratio?.storageID })
        #expect(VisitMetric.allCases.map(\.storageID) == [1, 2, 3, 4, 5])
    }

    @Test("The figures an app sets bands for are the registry's with a band maximum")
    func thresholds() {
        #expect(Set(ThresholdFigure.allCases.map(\.figure)) == Set(Figure.all.filter { $0.bandMaximum != nil }))
        #expect(ThresholdFigure.allCases.allSatisfy { $0.rawValue == $0.figure.name })
        #expect(ThresholdFigure.allCases.map(\.maximum) == [1000, 1000, 3600, 1000, 86_400])
        #expect(VisitMetric.allCases.compactMap(ThresholdFigure.init) == [.hitchRatio, .motionHitchRatio, .hangRate, .frozenFramesPerThousand])
    }

    @Test("The query routes accept exactly the registry's names")
    func queries() {
        #expect(QueryFigure.allNames == Figure.all.map(\.name))
        #expect(QueryFigure(.frozenFramesPerThousand).unit == "per 1000 frames")
        #expect(QueryFigure(.averageFPS).higherIsWorse == false && QueryFigure(.frozenFramesPerThousand).higherIsWorse == true)
    }
}
