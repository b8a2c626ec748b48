/**
 * Preloaded into a server process by fault tests (`node --import`): a CPU-bound busy loop that holds
 * the event loop for BUSY_LOOP_MS out of every BUSY_LOOP_EVERY_MS, as a saturated machine would.
 * Overload is then made, not hoped for: timers fire late and connections queue (docs/faults.md).
 * It spins in the check phase (setImmediate), right after the poll phase that read requests and sent
 * their queries, so replies wait unread while those queries' timers run out.
 */
const busyMs = Number(process.env.BUSY_LOOP_MS ?? 40);
const everyMs = Number(process.env.BUSY_LOOP_EVERY_MS ?? 50);
const spin = () => {
  const end = performance.now() + busyMs;
  while (performance.now() < end) {
    // spin
  }
};
setInterval(() => setImmediate(spin), everyMs).unref();
