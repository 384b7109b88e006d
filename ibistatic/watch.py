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
  last good published state; any other error of a republish, whatever raised it, is
  logged and the loop goes on, and the next republish reads every Archive again (the
  changes the failed one did not publish are not lost);
- watches an Archive folder again when it is deleted and made anew (an inotify watch
  dies with its folder);
- never forks while its observer threads run: republishes run in this process
  (:func:`ibistatic.forked.in_process`); only the initial build, before any thread
  starts, may use forked workers.
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
from pathlib import Path

from watchdog import events as fs_events

from . import forked
from .config import SiteConfig
from .errors import IbistaticError
from .site.build import BuildReport, Publisher
from .store.layout import check_output
from .summary import summary

__all__ = ["Watcher"]


#: The events that say something changed. Without a filter watchdog asks inotify for
#: opens and closes too; then every crawl of a large archive (a rescan, or the observer's
#: own walk as it starts) floods the kernel's event queue, which overflows, which means
#: a full rescan, which floods it again.
_CHANGES = (
    fs_events.FileCreatedEvent,
    fs_events.DirCreatedEvent,
    fs_events.FileModifiedEvent,
    fs_events.FileDeletedEvent,
    fs_events.DirDeletedEvent,
    fs_events.FileMovedEvent,
    fs_events.DirMovedEvent,
    fs_events.FileClosedEvent,
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
            "cannot watch the archives: the inotify watch limit "
            f"({limit or 'fs.inotify.max_user_watches'}) is reached; "
            "each folder of an archive takes one watch. Raise it (sudo sysctl fs.inotify.max_user_watches=1048576) "
            "or watch with --polling"
        )
    if error.errno == errno.EMFILE:
        return IbistaticError(
            "cannot watch the archives: too many inotify instances "
            "(fs.inotify.max_user_instances); stop other watchers or use --polling"
        )
    return error


def _identity(path: str) -> tuple[int, int] | None:
    """Which folder `path` is now (device, inode); None when there is none."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return (info.st_dev, info.st_ino)


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
        self.failed = 0  # how many of them failed
        self.last_started = 0.0  # monotonic time the last finished republish started
        self._read_all = False  # the last republish failed: the next one reads everything
        self._watched: dict[str, tuple] = {}  # archive root -> (its identity, its watch)

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
            self._watch(observer, str(root))
        return observer

    def _watch(self, observer, root: str) -> None:
        identity = _identity(root)
        watch = None
        if identity is not None:
            watch = observer.schedule(
                self.events, root, recursive=True, event_filter=list(_CHANGES)
            )
        self._watched[root] = (identity, watch)

    def _rewatch(self, observer) -> None:
        """An Archive folder deleted, or deleted and made anew, since it was watched:
        watch the new one, and read everything again (its events were not seen)."""
        for root, (identity, watch) in list(self._watched.items()):
            now = _identity(root)
            if now == identity:
                continue
            self.log(
                f"{root}: "
                + (
                    "the Archive folder is gone"
                    if now is None
                    else "the Archive folder was made anew: watching it again"
                )
            )
            if watch is not None:
                try:
                    observer.unschedule(watch)
                except (KeyError, OSError):
                    pass  # its emitter stopped with the folder
            try:
                self._watch(observer, root)
            except OSError as error:
                self.log(
                    f"{root}: cannot watch it again: {error}; the periodic rescan will see its changes"
                )
                self._watched[root] = (now, None)
            self.events.events_lost()

    def up_to_date(self) -> bool:
        """No event since the start of the last finished republish."""
        return (
            not self.events.paths and not self.events.lost and self.last_started > self.events.last
        )

    def publish(self, why: str, paths: set[str] | None = None) -> BuildReport | None:
        """Republish; with `paths`, only the repositories they name are read again."""
        started = time.perf_counter()
        began = time.monotonic()
        changed = paths
        if self._read_all:
            paths = None  # what the failed republish left unpublished is not in `paths`
        self.publisher.progress.times.clear()  # this republish times its own phases
        try:
            report = self.publisher.build(changed_paths=paths)
        except Exception as error:  # keep watching, whatever failed: the next change may fix it
            self._failed(why, changed, error)
            return None
        finally:
            self.last_started = began
            self.republished += 1
            # what this build keeps is long-lived: the cyclic GC need not scan it again on
            # every later republish (a full scan of a large site's objects takes long)
            gc.freeze()
        self._read_all = False
        for problem in report.problems:
            self.log(str(problem))
        for warning in report.warnings:  # the summary counts them: they are shown too
            self.log(f"warning: {warning}")
        times = self.publisher.progress.times
        self.log(f"{why}: {summary(report, times)} ({time.perf_counter() - started:.2f} s)")
        return report

    def _failed(self, why: str, changed: set[str] | None, error: Exception) -> None:
        """Log a failed republish with what it was about; the next one reads everything."""
        self.failed += 1
        self._read_all = True
        if changed:  # the crawler may not say where: the changed paths are the suspects
            shown = sorted(changed)[:5]
            why += (
                ": "
                + ", ".join(shown)
                + (f" and {len(changed) - len(shown)} more" if len(changed) > len(shown) else "")
            )
        text = (
            str(error)
            if isinstance(error, (IbistaticError, OSError))
            else f"{type(error).__name__}: {error}"
        )
        self.log(f"republish failed ({why}): {text}; the next change republishes everything")

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
        self._remove_abandoned_deposits()
        if threading.active_count() == 1:
            self.publish("initial build")  # no thread to fork over yet: workers allowed
        else:
            with forked.in_process():
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
        try:
            with forked.in_process():
                self._loop(observer)
        except KeyboardInterrupt:
            pass
        finally:
            observer.stop()
            observer.join(timeout=5)
            logging.getLogger("watchdog").removeHandler(lost)
            with forked.in_process():  # the observer may outlive its join: no fork
                self.publisher.save_state()  # so that the next `ibistatic build` can update
            self.log("watch stopped")

    def _remove_abandoned_deposits(self) -> None:
        """What deposits killed midway left in the Archives' work folders (hidden from
        the crawler, but taking space until the next deposit would remove it)."""
        from .deposit import WORKSPACE, remove_abandoned

        for root in self.config.archives:
            for leftover in remove_abandoned(Path(root) / WORKSPACE / "incoming"):
                self.log(f"removed {leftover}: the workspace of a deposit that died")

    def _loop(self, observer) -> None:
        next_rescan = time.monotonic() + self.rescan
        while not self.stopping.is_set():
            woke = self.events.wake.wait(
                timeout=max(0.05, min(1.0, next_rescan - time.monotonic()))
            )
            if self.stopping.is_set():
                break
            self._rewatch(observer)
            if woke or self.events.lost:
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

    def stop(self) -> None:
        self.stopping.set()
        self.events.wake.set()
