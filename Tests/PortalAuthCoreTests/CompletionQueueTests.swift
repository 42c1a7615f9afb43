import Foundation
import Testing
@testable import PortalAuthCore

/// The completion queue of the C ABI (portal_auth_completion_fd, portal_auth_run_completions)
/// and the log lines queued through it; also run under ThreadSanitizer and AddressSanitizer.
@Suite struct CompletionQueueTests {
    /// Runs `body` on a thread of its own (not one of Dispatch's, which a runner blocked in
    /// poll would keep from the pushers), inside `group`.
    private static func onThread(_ group: DispatchGroup, _ body: @escaping @Sendable () -> Void) {
        group.enter()
        let started = DetachedThread.start(name: "queue-test") {
            body()
            group.leave()
        }
        if started != 0 { group.leave() }
    }

    private static func readable(_ queue: CompletionQueue) -> Bool {
        var watched = pollfd(fd: queue.descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&watched, 1, 0) == 1 && watched.revents & Int16(POLLIN) != 0
    }

    @Test func everyJobRunsExactlyOnceWhilePushersAndRunnersRace() throws {
        let queue = try #require(CompletionQueue())
        let done = try #require(WakeSignal())
        let (pushers, perPusher) = (4, 500)
        let total = pushers * perPusher
        let runs = Locked((counts: [Int](repeating: 0, count: total), sum: 0, threads: Set<UInt>()))
        let group = DispatchGroup()
        for pusher in 0..<pushers {
            Self.onThread(group) {
                for index in 0..<perPusher {
                    let job = pusher * perPusher + index
                    queue.push {
                        let finished = runs.withLock { runs in
                            runs.counts[job] += 1
                            runs.sum += 1
                            runs.threads.insert(UInt(pthread_self()))
                            return runs.sum == total
                        }
                        if finished { done.signal() }
                    }
                }
            }
        }
        // Two hosts' threads run the queue at once, each until the last job has run.
        for _ in 0..<2 {
            Self.onThread(group) {
                var watched = [pollfd(fd: queue.descriptor, events: Int16(POLLIN), revents: 0), done.pollDescriptor]
                while poll(&watched, 2, 30_000) > 0, watched[1].revents == 0 {
                    queue.run()
                }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        let final = runs.withLock { $0 }
        #expect(final.sum == total)
        #expect(final.counts.allSatisfy { $0 == 1 })
        #expect(final.threads.count <= 2)
        #expect(!Self.readable(queue))
        #expect(queue.run() == 0)
    }

    @Test func theDescriptorIsReadableExactlyWhileJobsArePending() throws {
        let queue = try #require(CompletionQueue())
        let ran = Locked<[String]>([])
        #expect(!Self.readable(queue))
        #expect(queue.run() == 0)

        queue.push { ran.withLock { $0.append("a") } }
        #expect(Self.readable(queue))
        #expect(Self.readable(queue)) // level-triggered: until the run
        queue.push { ran.withLock { $0.append("b") } }
        #expect(ran.withLock { $0 }.isEmpty)
        #expect(queue.run() == 2)
        #expect(ran.withLock { $0 } == ["a", "b"])
        #expect(!Self.readable(queue))

        // A job queued by a running job waits for the next run, the descriptor readable again.
        queue.push { queue.push { ran.withLock { $0.append("later") } } }
        #expect(queue.run() == 1)
        #expect(Self.readable(queue))
        #expect(queue.run() == 1)
        #expect(ran.withLock { $0 }.last == "later")
        #expect(!Self.readable(queue))
    }

    @Test func aTaskThatPrefersTheQueueRunsOnlyInsideItsRunsAndToTheEndInOne() async throws {
        let queue = try #require(CompletionQueue())
        let steps = Locked<[UInt]>([]) // the thread each step of the task ran on
        let task = Task(executorPreference: queue) {
            steps.withLock { $0.append(UInt(pthread_self())) }
            await Task.yield() // a second step, queued by the first
            steps.withLock { $0.append(UInt(pthread_self())) }
        }
        #expect(Self.readable(queue))
        #expect(steps.withLock { $0 }.isEmpty)
        let here = UInt(pthread_self())
        #expect(queue.run() == 0) // a task's steps are the library's work, not completions
        #expect(steps.withLock { $0 } == [here, here])
        #expect(!Self.readable(queue))
        await task.value
    }

    /// What a run queues for itself and takes (a completion that a call's step queues) leaves
    /// the descriptor unreadable; the steps it leaves for the next run make it readable.
    @Test func aRunSignalsOnlyTheWorkItLeaves() async throws {
        let queue = try #require(CompletionQueue())
        let readableInside = Locked<[Bool]>([])
        let task = Task(executorPreference: queue) {
            queue.push {}
            readableInside.withLock { $0.append(Self.readable(queue)) }
            for _ in 0..<20 { await Task.yield() } // more steps than one run takes
        }
        #expect(queue.run() == 1) // the completion, taken by the run that queued it
        #expect(readableInside.withLock { $0 } == [false])
        #expect(Self.readable(queue))
        for _ in 0..<10 where Self.readable(queue) { queue.run() }
        await task.value
        #expect(!Self.readable(queue))
    }

    /// A library thread that attends to the queue does a call's step, never its completion,
    /// which it leaves signalled for the host.
    @Test func theCompletionThatAnAttendingThreadLeavesIsSignalled() async throws {
        let queue = try #require(CompletionQueue())
        let ran = Locked(false)
        let task = Task(executorPreference: queue) { queue.push { ran.withLock { $0 = true } } }
        queue.attend() // no run has begun yet: it is overdue
        #expect(!ran.withLock { $0 })
        #expect(Self.readable(queue))
        #expect(queue.run() == 1)
        #expect(ran.withLock { $0 } && !Self.readable(queue))
        await task.value
    }

    /// Host code that a call's step calls (a log handler) sees the queue as from outside the
    /// run: what was pending, and what it queues itself, make the descriptor readable, so it
    /// may wait for the descriptor or for another thread that runs the queue.
    @Test func hostCodeInsideARunSeesTheQueueAsFromOutside() async throws {
        for queuesItself in [false, true] {
            let queue = try #require(CompletionQueue())
            let readableInHostCode = Locked<Bool?>(nil)
            let task = Task(executorPreference: queue) {
                if !queuesItself { queue.push {} } // the step's completion, pending
                queue.hostCode {
                    if queuesItself { queue.push {} } // a call the host code starts, say
                    readableInHostCode.withLock { $0 = Self.readable(queue) }
                }
            }
            #expect(queue.run() == 1)
            #expect(readableInHostCode.withLock { $0 } == true)
            #expect(!Self.readable(queue))
            await task.value
        }
    }

    /// Two components' own queues, each run by a thread of its own: every call of a queue
    /// does its work and completes on that queue's thread alone, exactly once (the C ABI's
    /// portal_auth_completion_queue_new; Tests/c/component_queue_test.c does it through the
    /// ABI, under valgrind).
    @Test func twoHostQueuesKeepTheirCallsOnTheirOwnThreads() async throws {
        let emulator = try await Emulator.shared.get()
        let client = try makeClient(emulator, environment: Env.open)
        let calls = 1000
        let group = DispatchGroup()
        let seen = Locked<[[(thread: UInt, ok: Bool)]]>([[], []])
        let owners = Locked<[UInt]>([0, 0])
        for component in 0..<2 {
            let queue = try #require(CompletionQueue.hostQueue())
            Self.onThread(group) {
                owners.withLock { $0[component] = UInt(pthread_self()) }
                for _ in 0..<calls {
                    Task(executorPreference: queue) {
                        let succeeded = await PortalAuth.driven(by: queue) { (try? await client.getMethods()) != nil }
                        queue.push { seen.withLock { $0[component].append((UInt(pthread_self()), succeeded)) } }
                    }
                }
                var watched = pollfd(fd: queue.descriptor, events: Int16(POLLIN), revents: 0)
                while seen.withLock({ $0[component].count }) < calls, poll(&watched, 1, 30_000) == 1 {
                    queue.run()
                }
            }
        }
        #expect(group.wait(timeout: .now() + 120) == .success)
        let threads = owners.withLock { $0 }
        for (component, outcomes) in seen.withLock({ $0 }).enumerated() {
            #expect(outcomes.count == calls)
            #expect(outcomes.allSatisfy { $0.thread == threads[component] && $0.ok })
        }
    }

    @Test func aJobMayRunTheQueueAgain() throws {
        let queue = try #require(CompletionQueue())
        let seen = Locked<[String]>([])
        queue.push {
            seen.withLock { $0.append("outer") }
            queue.push { seen.withLock { $0.append("inner") } }
            #expect(queue.run() == 1) // nested
            seen.withLock { $0.append("outer again") }
        }
        #expect(queue.run() == 1)
        #expect(seen.withLock { $0 } == ["outer", "inner", "outer again"])
        #expect(!Self.readable(queue))
    }

    @Test func queuedLinesReachTheirHandlerOnlyThroughTheRun() throws {
        let queue = try #require(CompletionQueue())
        let slot = LogHandlerSlot(continuing: nil)
        let first = Locked<[String]>([]), second = Locked<[String]>([])
        slot.replace(with: { _, line in
            first.withLock { $0.append(line) }
        }, queue: queue)

        // Logged on another thread: queued, delivered by the run on this one.
        let logged = DispatchGroup()
        Self.onThread(logged) { slot.emit(.info) { "one" } }
        #expect(logged.wait(timeout: .now() + 30) == .success)
        #expect(first.withLock { $0 }.isEmpty)
        #expect(Self.readable(queue))
        #expect(queue.run() == 1)
        #expect(first.withLock { $0 } == ["one"])

        // A line still queued when its handler is replaced is dropped.
        slot.emit(.info) { "two" }
        slot.replace(with: { _, line in second.withLock { $0.append(line) } }, queue: queue)
        #expect(queue.run() == 1)
        #expect(first.withLock { $0 } == ["one"])
        #expect(second.withLock { $0 }.isEmpty)

        // Without a queue the handler is called where the line is logged.
        slot.replace(with: { _, line in second.withLock { $0.append(line) } }, queue: nil)
        slot.emit(.warning) { "three" }
        #expect(second.withLock { $0 } == ["three"])
        #expect(!Self.readable(queue))
    }
}
