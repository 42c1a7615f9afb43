/// What a timeout of the C ABI means, decided here once (portal_auth.h, "Timeouts"): a
/// whole number of milliseconds, where zero or less asks for the library's default. The
/// bindings pass their callers' values through unchanged.
func timeout(milliseconds: Int32, default fallback: Duration) -> Duration {
    milliseconds > 0 ? .milliseconds(milliseconds) : fallback
}
