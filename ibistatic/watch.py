"""``ibistatic watch``: build once, then republish whenever the Archives change.

File events (watchdog; inotify on Linux, or polling for network file systems) only say
*that* something changed: each republish is the same incremental build as
``ibistatic build`` (see site/build.py), run on fresh input, so a watched site always
equals a full build of the same trees.  The loop:

- waits until events have been quiet for `debounce` seconds and every file they named
  has stopped growing (created events fire before a write ends; editors save by
  writing a temporary file and renaming it over the old one: both settle the same way);
- republishes and logs what changed and how long it took;
- every `rescan` seconds republishes anyway, a backstop for missed events (inotify
  watch limits, network file systems);
- never dies on bad input: an invalid descriptor is reported and that item keeps its
  last good published state; any other error of a republish is logged and the loop goes on.
"""

from __future__ import annotations

import errno
import gc
import logging
import os
import threading
import time
import warnings
from collections.abc import Callable

from watchdog import events as fs_events

from .config import SiteConfig
from .errors import IbistaticError
from .store.layout import check_output
from .site.build import BuildReport, Publisher

__all__ = ["Watcher"]


#: The events that say something changed. Without a filter watchdog asks inotify for
#: opens and closes too; then every crawl of a large archive (a rescan, or the observer's
#: own walk as it starts) floods the kernel's event queue, which overflows, which means
#: a full rescan, which floods it again.
_CHANGES = (
    fs_events.FileCreatedEvent, fs_events.DirCreatedEvent, fs_events.FileModifiedEvent,
    fs_events.FileDeletedEvent, fs_events.DirDeletedEvent, fs_events.FileMovedEvent,
    fs_events.DirMovedEvent, fs_events.FileClosedEvent,
)


class _Events:
    """What the observer threads saw since the last republish."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.paths: set[str] = set()
        self.lost = False
        self.last = 0.0
        self.wake = threading.Event()

    def dispatch(self, event) -> None:  # watchdog's handler interface
        if event.event_type in ("opened", "closed_no_write"):
            return  # reading a file changes nothing
        if event.event_type == "modified" and event.is_directory:
            return  # a folder "changes" whenever a child does: the child's own event says which
        paths = [os.fsdecode(p) for p in (event.src_path, getattr(event, "dest_path", "")) if p]
        paths = [p for p in paths if "/.ibistatic/" not in p and not p.endswith("/.ibistatic")]
        if not paths:
            return  # ibistatic's own work folder (deposits are built there, then renamed in)
        with self.lock:
            self.paths.update(paths)
            self.last = time.monotonic()
        self.wake.set()

    def take(self) -> set[str] | None:
        """The changed paths; None when events were lost (a whole rescan is needed)."""
        with self.lock:
            paths, self.paths = self.paths, set()
            lost, self.lost = self.lost, False
            self.wake.clear()
            return None if lost else paths

    def events_lost(self) -> None:
        with self.lock:
            self.lost = True
            self.last = time.monotonic()
        self.wake.set()


class _LostEvents(logging.Handler):
    """watchdog only logs an inotify queue overflow: turn it into a rescan."""

    def __init__(self, events: _Events) -> None:
        super().__init__(logging.WARNING)
        self.events = events

    def emit(self, record: logging.LogRecord) -> None:
        if "overflow" in record.getMessage().lower():
            self.events.events_lost()


def _sizes(paths: set[str]) -> dict[str, int]:
    sizes = {}
    for path in paths:
        try:
            sizes[path] = os.stat(path).st_size
        except OSError:
            sizes[path] = -1  # gone (renamed away or deleted)
    return sizes


#: How long watchdog holds a "moved from" event to pair it with its "moved to". Its
#: default, 0.5 s, delays every event behind it that long, and a deposit is a move (from
#: the archive's incoming/ folder into place).  The kernel queues the two halves of a
#: rename together, so they pair within milliseconds.
MOVE_PAIRING_SECONDS = 0.02


def _pair_moves_quickly() -> None:
    try:  # watchdog 5 and later
        from watchdog.observers.inotify_move_event_grouper import InotifyMoveEventGrouper as grouper
    except ImportError:  # earlier versions
        try:
            from watchdog.observers.inotify_buffer import InotifyBuffer as grouper
        except ImportError:
            return  # no inotify here (the polling observer needs none of this)
    grouper.delay = MOVE_PAIRING_SECONDS


def _observer_error(error: OSError) -> Exception:
    """inotify's limits, said in terms of what to do about them."""
    if error.errno == errno.ENOSPC:
        limit = _read_int("/proc/sys/fs/inotify/max_user_watches")
        return IbistaticError(
            f"cannot watch the archives: the inotify watch limit ({limit or 'fs.inotify.max_user_watches'}) is reached; "
            "each folder of an archive takes one watch. Raise it (sudo sysctl fs.inotify.max_user_watches=1048576) "
            "or watch with --polling"
        )
    if error.errno == errno.EMFILE:
        return IbistaticError("cannot watch the archives: too many inotify instances (fs.inotify.max_user_instances); stop other watchers or use --polling")
    return error


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return None


class Watcher:
    def __init__(
        self,
        config: SiteConfig,
        *,
        polling: bool = False,
        debounce: float = 0.2,
        rescan: float = 300.0,
        log: Callable[[str], None] = print,
    ) -> None:
        self.config = config
        self.polling = polling
        self.debounce = debounce
        self.rescan = rescan
        self.log = log
        self.publisher = Publisher(config, log=log, keep_last_good=True)
        self.publisher.persist = False  # kept in memory while watching; saved on stop
        self.events = _Events()
        self.stopping = threading.Event()
        self.republished = 0  # how many republishes ran (tests wait on it)
        self.last_started = 0.0  # monotonic time the last finished republish started

    def _observer(self):
        # inotify re-adds a watch when a deposit renames a folder in: harmless, not news
        warnings.filterwarnings("ignore", category=RuntimeWarning, module=r"watchdog\.")
        if self.polling:
            from watchdog.observers.polling import PollingObserver

            observer = PollingObserver(timeout=1)
        else:
            from watchdog.observers import Observer

            _pair_moves_quickly()
            observer = Observer()
        for root in self.config.archives:
            observer.schedule(self.events, str(root), recursive=True, event_filter=list(_CHANGES))
        return observer

    def up_to_date(self) -> bool:
        """No event since the start of the last finished republish."""
        return not self.events.paths and not self.events.lost and self.last_started > self.events.last

    def publish(self, why: str, paths: set[str] | None = None) -> BuildReport | None:
        """Republish; with `paths`, only the repositories they name are read again."""
        started = time.perf_counter()
        began = time.monotonic()
        try:
            report = self.publisher.build(changed_paths=paths)
        except (IbistaticError, OSError) as error:  # keep watching: the next change may fix it
            self.log(f"republish failed ({why}): {error}")
            return None
        finally:
            self.last_started = began
            self.republished += 1
            # what this build keeps is long-lived: the cyclic GC need not scan it again on
            # every later republish (a full scan of 100k items takes about a second)
            gc.freeze()
        for problem in report.problems:
            self.log(str(problem))
        self.log(f"{why}: {report.summary()} ({time.perf_counter() - started:.2f} s)")
        return report

    def _settled(self, paths: set[str] | None) -> set[str] | None:
        """Wait until no event came for `debounce` s and the named files stopped growing.
        None: events were lost, read everything again."""
        if paths is None:
            time.sleep(self.debounce)
            self.events.take()
            return None
        sizes = _sizes(paths)
        while not self.stopping.is_set():
            quiet = time.monotonic() - self.events.last
            if quiet < self.debounce:
                time.sleep(self.debounce - quiet)
                continue
            more = self.events.take()
            if more is None:
                return None
            paths |= more
            now = _sizes(paths)
            # quiet for `debounce` since the last event, and no file seen before it grew
            # meanwhile (a writer the events missed): paths that came in with `more` had
            # their last event that long ago too, so they need no second look
            if all(now[path] == size for path, size in sizes.items()):
                return paths
            sizes = now
            time.sleep(self.debounce)
        return paths

    def run(self, ready: threading.Event | None = None) -> None:
        """Build, then republish on changes until :meth:`stop` (or Ctrl-C)."""
        check_output(self.config)  # an output it may not replace stops watch at once
        self.publish("initial build")
        observer = self._observer()
        lost = _LostEvents(self.events)
        logging.getLogger("watchdog").addHandler(lost)
        try:
            observer.start()
        except OSError as error:
            observer.stop()
            logging.getLogger("watchdog").removeHandler(lost)
            raise _observer_error(error) from None
        if ready is not None:
            ready.set()
        next_rescan = time.monotonic() + self.rescan
        try:
            while not self.stopping.is_set():
                woke = self.events.wake.wait(timeout=max(0.05, min(1.0, next_rescan - time.monotonic())))
                if self.stopping.is_set():
                    break
                if woke:
                    paths = self._settled(self.events.take())
                    if self.stopping.is_set():
                        break
                    if paths is None:
                        self.publish("file events were lost: full rescan")
                    else:
                        self.publish(f"{len(paths)} changed paths", paths)
                elif time.monotonic() >= next_rescan:
                    self.publish("periodic rescan")
                else:
                    continue
                next_rescan = time.monotonic() + self.rescan
        except KeyboardInterrupt:
            pass
        finally:
            observer.stop()
            observer.join(timeout=5)
            logging.getLogger("watchdog").removeHandler(lost)
            self.publisher.save_state()  # so that the next `ibistatic build` can update
            self.log("watch stopped")

    def stop(self) -> None:
        self.stopping.set()
        self.events.wake.set()
