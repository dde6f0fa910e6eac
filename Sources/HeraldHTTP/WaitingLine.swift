/// The callers waiting for a slot of an `InFlightLimiter`: urgent ones and the rest, each line
/// first come first served.
///
/// Every operation takes constant time (amortised), however long the lines grow: a burst of
/// tens of thousands of sends waits here, and a line that was searched from the front on
/// every admission cost quadratic time under the limiter's lock (10,000 queued sends kept
/// both threads of Swift's cooperative pool busy for over 20 s in a debug build, and every
/// other task in the process waited). A caller that leaves (cancelled) is forgotten by id and
/// skipped when its turn comes.
struct WaitingLine<Element> {
    private var waiting: [Int: Element] = [:]
    private var urgent = Order()
    private var normal = Order()

    var isEmpty: Bool { waiting.isEmpty }
    var count: Int { waiting.count }

    /// Puts a caller at the back of its line; `id` must be new.
    mutating func append(_ element: Element, id: Int, urgent isUrgent: Bool) {
        waiting[id] = element
        if isUrgent { urgent.append(id) } else { normal.append(id) }
    }

    /// Takes a caller out of the line wherever it stands; nil when it is not waiting.
    mutating func remove(id: Int) -> Element? {
        waiting.removeValue(forKey: id)
    }

    /// Takes the caller whose turn it is: the first urgent one when `urgent` may go, else
    /// the first of the rest when `normal` may go.
    mutating func next(urgent mayUrgent: Bool, normal mayNormal: Bool) -> Element? {
        if mayUrgent, let element = Self.take(from: &urgent, &waiting) { return element }
        if mayNormal, let element = Self.take(from: &normal, &waiting) { return element }
        return nil
    }

    private static func take(from order: inout Order, _ waiting: inout [Int: Element]) -> Element? {
        while let id = order.popFirst() {
            if let element = waiting.removeValue(forKey: id) { return element }
        }
        return nil
    }

    /// Ids in arrival order: an array read from a moving head, compacted now and then.
    private struct Order {
        private var ids: [Int] = []
        private var head = 0

        mutating func append(_ id: Int) { ids.append(id) }

        mutating func popFirst() -> Int? {
            guard head < ids.count else { return nil }
            let id = ids[head]
            head += 1
            if head == ids.count {
                ids.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1_024, head * 2 >= ids.count {
                ids.removeFirst(head)
                head = 0
            }
            return id
        }
    }
}
