import HarnessTimeline
import Testing

/// A component's owned tasks: forgotten as they end, cancelled and awaited at its shutdown, and none
/// started after it. Every wait here is for an event (a stream element, a task's end), never a time.
struct OwnedTasksTests {
    @Test func aTaskThatEndsIsForgotten() async {
        let tasks = OwnedTasks()
        let (ended, endedContinuation) = AsyncStream.makeStream(of: Void.self)
        tasks.start { endedContinuation.yield() }
        var iterator = ended.makeAsyncIterator()
        await iterator.next()
        // Its last step, taking itself out, comes after the body: the shutdown then finds nothing.
        await tasks.cancelAllAndWait()
        #expect(tasks.count == 0)
    }

    @Test func shutdownCancelsWhatRunsAndWaitsForItsEnd() async {
        let tasks = OwnedTasks()
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let finished = LockedState(false)
        tasks.start {
            startedContinuation.yield()
            // An hour, unless cancelled: only the shutdown ends it.
            await pause(for: .seconds(3600))
            finished.withLock { $0 = Task.isCancelled }
        }
        var iterator = started.makeAsyncIterator()
        await iterator.next()
        #expect(tasks.count == 1)
        await tasks.cancelAllAndWait()
        #expect(finished.withLock { $0 }, "it was cancelled, and had ended when the shutdown returned")
        #expect(tasks.count == 0)
    }

    @Test func nothingStartsAfterTheShutdown() async {
        let tasks = OwnedTasks()
        await tasks.cancelAllAndWait()
        let ran = LockedState(false)
        tasks.start {
            ran.withLock { $0 = true }
            await pause(for: .seconds(3600))
        }
        // Had it started, it would be running until cancelled.
        #expect(tasks.count == 0)
        await tasks.cancelAllAndWait()
        #expect(!ran.withLock { $0 })
    }

    @Test func uncancelledWorkFinishesInACancelledTask() async {
        let outer = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await uncancelled { Task.isCancelled }
        }
        #expect(await outer.value == false, "the caller's cancellation does not reach it")
    }
}
