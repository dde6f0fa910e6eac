/// How long a dispatcher loop waits after its own database work failed (a claim, a
/// fan-out, an acknowledgement): 200 ms after the first failure, doubling, at most 5 s.
enum LoopBackoff {
    static func after(failures: Int) -> Duration {
        .milliseconds(min(5_000, 100 * (1 << min(max(failures, 0), 6))))
    }
}
