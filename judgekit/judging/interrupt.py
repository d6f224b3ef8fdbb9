"""Ctrl-C during a run: stop sending, store what is in flight, then stop.

Cancelling a run at once throws away answers the endpoint has already sent (and
billed). So the first SIGINT only *requests* a stop: no new call starts, no
retry is attempted, waits (rate limit, backoff) end at once, and the calls
whose request is in flight get up to :data:`GRACE_S` seconds to answer and be
committed. A second SIGINT, or the end of the grace period, cancels what is
left. The run then ends as interrupted (:class:`RunInterrupted`, a
``KeyboardInterrupt``), its summary recorded; a rerun finishes the rest.

The handler is installed only in the main thread of a loop that supports
signal handlers. A run started by the blocking ``run_judgments`` inside a
running event loop (a notebook cell) has its own loop in a worker thread, where
no signal arrives: :func:`run_on_worker_thread` catches the Ctrl-C in the
thread that waits and forwards it to the run's :class:`Stopper`
(:class:`RemoteStop`), so a notebook stops exactly as the CLI does.
Cancelling the task of an awaited run stops at once instead: every answer
already received is stored (each is committed on its own) and the run's claims
are released, but calls in flight are abandoned.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import functools
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Collection, Coroutine, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TextIO, TypeVar

#: Seconds the calls in flight get to finish after the first Ctrl-C.
GRACE_S = 10.0


class CallStopped(Exception):
    """A call not started, or not retried, because the run is stopping."""


class RunInterrupted(KeyboardInterrupt):
    """The run stopped on request after storing every answer that arrived in time."""


class Stopper:
    """The stop request of one run: first :meth:`request` stops sending, the second forces."""

    def __init__(self, *, grace_s: float = GRACE_S, stream: TextIO | None = None,
                 say: Callable[[str], None] | None = None) -> None:
        self.grace_s = grace_s
        self.stream = stream or sys.stderr
        #: how the stop messages reach the user (a run's bar prints them above itself)
        self.say = say
        self.requested = asyncio.Event()
        self.forced = asyncio.Event()
        self.by_signal = False

    def request(self) -> None:
        """Ask the run to stop (what the first Ctrl-C does); a second request forces it."""
        if not self.requested.is_set():
            self.requested.set()
            self._say(f"stopping: no new calls; waiting up to {self.grace_s:g} s for the calls "
                      "in flight to be stored (Ctrl-C again to stop now)")
        elif not self.forced.is_set():
            self.forced.set()
            self._say("stopping now: calls still in flight are abandoned")

    def _on_signal(self) -> None:
        self.by_signal = True
        self.request()

    def _say(self, message: str) -> None:
        if self.say is not None:
            self.say(message)
            return
        self.stream.write(f"\n{message}\n")
        self.stream.flush()

    @contextmanager
    def on_sigint(self) -> Iterator[None]:
        """While inside, SIGINT calls :meth:`request` instead of cancelling the run.

        On a worker thread's loop started by :func:`run_on_worker_thread`, the
        waiting thread's Ctrl-C does instead.
        """
        remote = _REMOTE.get()
        if remote is not None:
            with remote.attached(self):
                yield
            return
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        loop = asyncio.get_running_loop()
        previous = signal.getsignal(signal.SIGINT)
        try:
            loop.add_signal_handler(signal.SIGINT, self._on_signal)
        except (NotImplementedError, RuntimeError, ValueError):
            yield
            return
        try:
            yield
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            if previous is not None:
                signal.signal(signal.SIGINT, previous)

    def check(self) -> None:
        """Raise :class:`CallStopped` once a stop was requested."""
        if self.requested.is_set():
            raise CallStopped

    async def sleep(self, seconds: float) -> None:
        """``asyncio.sleep`` that ends with :class:`CallStopped` when a stop is requested."""
        self.check()
        try:
            await asyncio.wait_for(self.requested.wait(), seconds)
        except TimeoutError:
            return
        raise CallStopped

    def gate(
        self, before: Callable[[], Awaitable[None]] | None
    ) -> Callable[[], Awaitable[None]]:
        """A ``before_attempt`` hook: no attempt starts once stopping, even after a wait."""

        async def before_attempt() -> None:
            self.check()
            if before is not None:
                waiting = asyncio.ensure_future(before())
                stop = asyncio.ensure_future(self.requested.wait())
                done, _ = await asyncio.wait({waiting, stop}, return_when=asyncio.FIRST_COMPLETED)
                stop.cancel()
                if waiting not in done:
                    waiting.cancel()
                    raise CallStopped
                waiting.result()
            self.check()

        return before_attempt

    async def drain(self, pending: Collection[asyncio.Task[None]],
                    busy: Callable[[asyncio.Task[None]], bool]) -> None:
        """After a stop request: cancel idle tasks, give busy ones the grace period."""
        waiting = {task for task in pending if busy(task)}
        for task in pending:
            if task not in waiting:
                task.cancel()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.grace_s
        forced = asyncio.ensure_future(self.forced.wait())
        try:
            while waiting and not forced.done():
                remaining = deadline - loop.time()
                if remaining <= 0:
                    break
                done, _ = await asyncio.wait({*waiting, forced}, timeout=remaining,
                                             return_when=asyncio.FIRST_COMPLETED)
                waiting -= done
        finally:
            forced.cancel()


async def supervise(
    tasks: list[asyncio.Task[None]], stopper: Stopper, busy: Callable[[asyncio.Task[None]], bool]
) -> None:
    """Wait for every task; on the first error cancel the rest and raise it.

    On a stop request, :meth:`Stopper.drain` the tasks, then raise
    :class:`RunInterrupted`. Cancellation from outside cancels everything at once.
    """
    stop = asyncio.ensure_future(stopper.requested.wait())
    pending: set[asyncio.Task[None]] = set(tasks)
    try:
        while pending:
            done, _ = await asyncio.wait({*pending, stop}, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                if task is not stop and not task.cancelled() and task.exception() is not None:
                    raise task.exception()  # type: ignore[misc]
            pending -= done
            if stop in done:
                await stopper.drain(pending, busy)
                raise RunInterrupted
    finally:
        stop.cancel()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


_R = TypeVar("_R")


class RemoteStop:
    """Ctrl-C from the thread that waits for a run on another thread's loop.

    :meth:`request` may be called from any thread; it reaches the runs'
    stoppers on their loop. A request made while no run is attached (before the
    first starts) stops the next run as soon as it attaches; a second one with
    no run attached cancels the coroutine instead.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self._stoppers: list[Stopper] = []
        self.requests = 0

    def bind(self) -> None:
        """Remember the running loop and task (called on the worker thread)."""
        with self._lock:
            self._loop = asyncio.get_running_loop()
            self._task = asyncio.current_task()

    @contextmanager
    def attached(self, stopper: Stopper) -> Iterator[None]:
        """While inside, requests reach ``stopper`` (those made before, at once)."""
        with self._lock:
            self._stoppers.append(stopper)
            early = min(self.requests, 2)
        for _ in range(early):
            stopper._on_signal()
        try:
            yield
        finally:
            with self._lock:
                self._stoppers.remove(stopper)

    def request(self) -> None:
        """One Ctrl-C: the first stops sending, the second forces (as :meth:`Stopper.request`)."""
        with self._lock:
            self.requests += 1
            loop, task, stoppers = self._loop, self._task, list(self._stoppers)
            force = not stoppers and self.requests > 1
        if loop is None or loop.is_closed():
            return
        try:
            for stopper in stoppers:
                loop.call_soon_threadsafe(stopper._on_signal)
            if force and task is not None:
                loop.call_soon_threadsafe(task.cancel)
        except RuntimeError:  # the loop closed meanwhile: the run is over
            pass


_REMOTE: contextvars.ContextVar[RemoteStop | None] = contextvars.ContextVar(
    "judgekit_remote_stop", default=None)


def run_on_worker_thread(main: Coroutine[Any, Any, _R]) -> _R:
    """Run ``main`` on a fresh loop in a worker thread and wait, forwarding Ctrl-C to it.

    What the blocking API does inside a running event loop (``asyncio.run``
    would refuse). A ``KeyboardInterrupt`` in the waiting thread becomes a stop
    request of the run (:class:`RemoteStop`); the wait goes on until the run has
    stored what arrived in time and raised :class:`RunInterrupted`. Without this
    the first Ctrl-C left the run judging everything on the worker thread.
    """
    remote = RemoteStop()
    outcome: concurrent.futures.Future[_R] = concurrent.futures.Future()

    async def bound() -> _R:
        remote.bind()
        _REMOTE.set(remote)
        return await main

    def target() -> None:
        try:
            outcome.set_result(asyncio.run(bound()))
        except BaseException as exc:  # handed to the waiting thread, raised there
            outcome.set_exception(exc)

    worker = threading.Thread(target=target, name="judgekit-run")
    worker.start()
    try:
        while True:
            try:
                result = outcome.result()
                break
            except KeyboardInterrupt:
                if outcome.done():  # the run's own RunInterrupted, or it ended meanwhile
                    result = outcome.result()
                    break
                remote.request()
            except asyncio.CancelledError:
                if not remote.requests:
                    raise
                raise RunInterrupted from None  # a second Ctrl-C before any run began
    finally:
        worker.join()
    return result


_P = ParamSpec("_P")


def blocking_form(
    func: Callable[_P, Coroutine[Any, Any, _R]], doc: str
) -> Callable[_P, _R]:
    """The synchronous form of an async function: same signature, its own event loop.

    Written once so the two forms cannot drift apart (a parameter added to one
    and forgotten in the other).
    """

    @functools.wraps(func)
    def blocking(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(func(*args, **kwargs))
        # Called from a running event loop (a Jupyter cell): asyncio.run() would refuse,
        # so run on a fresh loop in a worker thread and wait, Ctrl-C forwarded to the run
        # (``await`` the async form instead to keep the notebook's loop free).
        return run_on_worker_thread(func(*args, **kwargs))

    blocking.__name__ = blocking.__qualname__ = func.__name__.removeprefix("a")
    blocking.__doc__ = doc
    return blocking


__all__ = [
    "GRACE_S",
    "CallStopped",
    "RemoteStop",
    "RunInterrupted",
    "Stopper",
    "blocking_form",
    "run_on_worker_thread",
    "supervise",
]
