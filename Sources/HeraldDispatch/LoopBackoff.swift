/// How long a dispatcher loop waits after its own database work failed (a claim, a
/// fan-out, an acknowledgement): 200 ms after the first failure, doubling, at most 2 s, so a
/// worker finds a newly promoted primary within 2 s of its promotion.
enum LoopBackoff {
    static func after(failures: Int) -> Duration {
        .milliseconds(min(2_000, 100 * (1 << min(max(failures, 0), 5))))
    }
}
