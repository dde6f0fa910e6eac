import Foundation

/// A bar chart as numbers for an SVG template: where each bar goes and how tall it is, its
/// label and value for the tooltip. Pure geometry; the template draws it, escaping every
/// value like any other.
struct BarChart {
    struct Bar {
        let x: Double, y: Double, width: Double, height: Double
        let label: String
        let value: String
    }

    static let width = 720.0, height = 140.0, top = 12.0, bottom = 18.0

    let bars: [Bar]
    /// The value of the top of the scale, as text.
    let scale: String
    let firstLabel: String
    let lastLabel: String

    /// - Parameters:
    ///   - values: one per slice, nil where there is nothing to show.
    ///   - maximum: the top of the scale (the largest value when nil).
    init(values: [Double?], labels: [String], maximum: Double? = nil, format: (Double) -> String) {
        let top = maximum ?? max(values.compactMap { $0 }.max() ?? 0, 1)
        let slot = Self.width / Double(max(values.count, 1))
        let plot = Self.height - Self.top - Self.bottom
        bars = values.enumerated().compactMap { index, value in
            guard let value else { return nil }
            let height = max(plot * min(value, top) / top, value > 0 ? 1 : 0)
            return Bar(
                x: (Double(index) * slot + slot * 0.1).rounded(toPlaces: 1), y: (Self.top + plot - height).rounded(toPlaces: 1),
                width: (slot * 0.8).rounded(toPlaces: 1), height: height.rounded(toPlaces: 1),
                label: index < labels.count ? labels[index] : "", value: format(value))
        }
        scale = format(top)
        firstLabel = labels.first ?? ""
        lastLabel = labels.last ?? ""
    }

    /// For the template.
    var values: [String: Any] {
        [
            "width": Self.width, "height": Self.height, "baseline": Self.height - Self.bottom, "labelY": Self.height - 4,
            "scale": scale, "firstLabel": firstLabel, "lastLabel": lastLabel,
            "bars": bars.map { ["x": $0.x, "y": $0.y, "width": $0.width, "height": $0.height, "label": $0.label, "value": $0.value] }
        ]
    }
}

extension Double {
    fileprivate func rounded(toPlaces places: Int) -> Double {
        let factor = pow(10, Double(places))
        return (self * factor).rounded() / factor
    }
}
