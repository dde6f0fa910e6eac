import Foundation
import HeraldCore

/// `timestamptz` in the ISO text form that every Herald connection asks for
/// (`DateStyle=ISO`, `TimeZone=UTC`): `2026-11-21 23:48:39.123456+00`.
enum PostgresTimestamp {
    /// Formats with microsecond precision in UTC, which the server parses exactly.
    static func format(_ date: Date) -> String {
        let fields = Fields(date)
        guard fields.fitsFourDigits else { return fields.padded }
        return String(unsafeUninitializedCapacity: Fields.width) { fields.write(into: $0) }
    }

    /// Writes `date` as an element of an array literal, quoted (it holds a space).
    static func write(_ date: Date, into literal: inout PostgresArrayText) {
        let fields = Fields(date)
        guard fields.fitsFourDigits else { return literal.append(quoting: fields.padded) }
        literal.append(reserving: Fields.width + 2) { text in
            text[0] = UInt8(ascii: "\"")
            let written = fields.write(into: UnsafeMutableBufferPointer(rebasing: text[1...]))
            text[written + 1] = UInt8(ascii: "\"")
            return written + 2
        }
    }

    /// A moment's calendar fields in UTC, to the microsecond.
    private struct Fields {
        /// `2026-11-21 23:48:39.123456+00`
        static let width = 29
        var year, month, day, hour, minute, second, micros: Int64

        init(_ date: Date) {
            let totalMicroseconds = (date.timeIntervalSince1970 * 1_000_000).rounded()
            var seconds = Int64((totalMicroseconds / 1_000_000).rounded(.down))
            var micros = Int64(totalMicroseconds - Double(seconds) * 1_000_000)
            if micros < 0 {
                micros += 1_000_000
                seconds -= 1
            }
            var days = seconds / 86_400
            var secondOfDay = seconds % 86_400
            if secondOfDay < 0 {
                secondOfDay += 86_400
                days -= 1
            }
            (year, month, day) = PostgresTimestamp.civilDate(fromDays: days)
            (hour, minute, second) = (secondOfDay / 3600, secondOfDay / 60 % 60, secondOfDay % 60)
            self.micros = micros
        }

        var fitsFourDigits: Bool { (0...9999).contains(year) }

        /// Any year, as many digits as it takes (the slow way: years past 9999 are rare).
        var padded: String {
            pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + " "
                + pad(hour, 2) + ":" + pad(minute, 2) + ":" + pad(second, 2) + "." + pad(micros, 6) + "+00"
        }

        /// Writes the `width` bytes of a four-digit year, byte by byte (an acknowledgement
        /// binds two per delivery, and fifteen small strings joined were a tenth of building
        /// its statement, `perf`).
        /// - Returns: how many bytes it wrote.
        func write(into text: UnsafeMutableBufferPointer<UInt8>) -> Int {
            var position = 0
            func digits(_ value: Int64, _ width: Int, then separator: UInt8?) {
                var value = value
                for offset in stride(from: width - 1, through: 0, by: -1) {
                    text[position + offset] = UInt8(truncatingIfNeeded: 48 + value % 10)
                    value /= 10
                }
                position += width
                if let separator {
                    text[position] = separator
                    position += 1
                }
            }
            digits(year, 4, then: UInt8(ascii: "-"))
            digits(month, 2, then: UInt8(ascii: "-"))
            digits(day, 2, then: UInt8(ascii: " "))
            digits(hour, 2, then: UInt8(ascii: ":"))
            digits(minute, 2, then: UInt8(ascii: ":"))
            digits(second, 2, then: UInt8(ascii: "."))
            digits(micros, 6, then: UInt8(ascii: "+"))
            digits(0, 2, then: nil)
            return position
        }

        private func pad(_ value: Int64, _ width: Int) -> String {
            let digits = String(value)
            return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        }
    }

    /// Parses `YYYY-MM-DD[ T]HH:MM:SS[.ffffff][±HH[:MM[:SS]]]`, or a bare date; `nil` otherwise.
    static func parse(_ text: String) -> Date? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    /// `parse(_:)` on the text's UTF-8 bytes (a result's cell, as libpq holds it).
    static func parse(bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        if bytes.elementsEqual("infinity".utf8) { return .distantFuture }
        if bytes.elementsEqual("-infinity".utf8) { return .distantPast }
        var index = 0
        func number(_ count: Int) -> Int64? {
            guard index + count <= bytes.count else { return nil }
            var value: Int64 = 0
            for offset in 0..<count {
                let byte = bytes[index + offset]
                guard byte >= 48, byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
            }
            index += count
            return value
        }
        func expect(_ character: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == character else { return false }
            index += 1
            return true
        }
        guard let year = number(4), expect(45), let month = number(2), expect(45), let day = number(2) else {
            return nil
        }
        var seconds = days(fromCivil: year, month, day) * 86_400
        var fraction = 0.0
        if index < bytes.count {
            guard bytes[index] == 32 || bytes[index] == 84 else { return nil }
            index += 1
            guard let hour = number(2), expect(58), let minute = number(2), expect(58), let second = number(2) else {
                return nil
            }
            seconds += hour * 3600 + minute * 60 + second
            if expect(46) {
                var scale = 0.1
                while index < bytes.count, bytes[index] >= 48, bytes[index] <= 57 {
                    fraction += Double(bytes[index] - 48) * scale
                    scale /= 10
                    index += 1
                }
            }
            if index < bytes.count {
                let sign: Int64
                switch bytes[index] {
                case 43: sign = 1
                case 45: sign = -1
                case 90:
                    index += 1
                    sign = 0
                default: return nil
                }
                if sign != 0 {
                    index += 1
                    guard let offsetHours = number(2) else { return nil }
                    var offset = offsetHours * 3600
                    if expect(58) {
                        guard let offsetMinutes = number(2) else { return nil }
                        offset += offsetMinutes * 60
                        if expect(58) {
                            guard let offsetSeconds = number(2) else { return nil }
                            offset += offsetSeconds
                        }
                    }
                    seconds -= sign * offset
                }
            }
        }
        guard index == bytes.count else { return nil }
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        CivilCalendar.days(year: year, month: month, day: day)
    }

    fileprivate static func civilDate(fromDays days: Int64) -> (Int64, Int64, Int64) {
        CivilCalendar.date(fromDays: days)
    }
}
