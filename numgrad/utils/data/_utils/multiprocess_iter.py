"""The DataLoader's iterator with worker processes: index lists go out round-robin on one queue per worker
(prefetch_factor of them per worker ahead), batches come back on one result queue and are handed out in
sampler order; a worker's exception is raised again here, a dead or silent worker stops the loop."""
import atexit
import itertools
import multiprocessing
import queue

from . import worker
from .base_iter import _BaseDataLoaderIter
from .fetch import _DatasetKind
from .worker import MP_STATUS_CHECK_INTERVAL, ExceptionWrapper

_python_exiting = []  # set at interpreter exit: multiprocessing then ends the daemon workers itself
atexit.register(_python_exiting.append, True)
# Each live iterator's index queues, reachable from here: an iterator caught in a reference cycle (an exception's
# traceback holds it) is shut down by the garbage collector, which first runs the weakref callbacks of what the
# cycle alone holds; a queue's callback stops its feeder thread, and the None that tells a worker to exit would
# never be sent (the workers then hang until terminated).
_index_queues_of = {}


class _MultiProcessingDataLoaderIter(_BaseDataLoaderIter):
    def __init__(self, loader):
        super().__init__(loader)
        self._prefetch_factor = loader.prefetch_factor
        self._in_order = loader.in_order
        context = loader.multiprocessing_context or multiprocessing.get_context()
        self._worker_result_queue = context.Queue()
        self._shutdown = False
        self._workers_done_event = context.Event()
        self._index_queues, self._workers = [], []
        for i in range(self._num_workers):
            index_queue = context.Queue()
            index_queue.cancel_join_thread()  # a worker killed mid-epoch must not block our exit
            w = context.Process(target=worker._worker_loop, args=(
                self._dataset_kind, self._dataset, index_queue, self._worker_result_queue, self._workers_done_event,
                self._auto_collation, self._collate_fn, self._drop_last, self._base_seed, loader.worker_init_fn, i,
                self._num_workers, self._persistent_workers, self._shared_seed))
            w.daemon = True
            w.start()
            self._index_queues.append(index_queue)
            self._workers.append(w)
        _index_queues_of[id(self)] = self._index_queues
        self._data_queue = self._worker_result_queue
        self._reset(loader, first_iter=True)

    def _reset(self, loader, first_iter=False):
        super()._reset(loader, first_iter)
        self._send_idx = 0  # the next task to send to a worker
        self._rcvd_idx = 0  # the next task to hand out
        self._task_info = {}  # task -> (worker,) while outstanding, (worker, data) once arrived early
        self._tasks_outstanding = 0
        self._workers_status = [True] * self._num_workers
        self._workers_num_tasks = [0] * self._num_workers
        self._worker_queue_idx_cycle = itertools.cycle(range(self._num_workers))
        if not first_iter:  # persistent workers start the next epoch once all have acknowledged
            for index_queue in self._index_queues:
                index_queue.put(worker._ResumeIteration(self._shared_seed))
            resume_iteration_cnt = self._num_workers
            while resume_iteration_cnt > 0:
                return_idx, _ = self._get_data()
                if isinstance(return_idx, worker._ResumeIteration):
                    resume_iteration_cnt -= 1
        for _ in range(self._prefetch_factor * self._num_workers):
            self._try_put_index()

    def _try_get_data(self, timeout=MP_STATUS_CHECK_INTERVAL):
        try:
            return True, self._data_queue.get(timeout=timeout)
        except Exception as e:
            failed_workers = []
            for worker_id, w in enumerate(self._workers):
                if self._workers_status[worker_id] and not w.is_alive():
                    failed_workers.append(w)
                    self._mark_worker_as_unavailable(worker_id)
            if failed_workers:
                pids_str = ", ".join(str(w.pid) for w in failed_workers)
                raise RuntimeError(f"DataLoader worker (pid(s) {pids_str}) exited unexpectedly") from e
            if isinstance(e, queue.Empty):
                return False, None
            raise

    def _get_data(self):
        if self._timeout > 0:
            success, data = self._try_get_data(self._timeout)
            if success:
                return data
            raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds")
        while True:
            success, data = self._try_get_data()
            if success:
                return data

    def _next_data(self):
        while True:
            # skip the tasks of workers that have ended (an IterableDataset's exhausted copies)
            while self._rcvd_idx < self._send_idx:
                info = self._task_info.get(self._rcvd_idx)
                if info:
                    if len(info) == 2 or self._workers_status[info[0]]:  # arrived, or its worker still works
                        break
                    del self._task_info[self._rcvd_idx]
                self._rcvd_idx += 1
            else:
                if not self._persistent_workers:
                    self._shutdown_workers()
                raise StopIteration
            if len(self._task_info[self._rcvd_idx]) == 2:
                worker_id, data = self._task_info.pop(self._rcvd_idx)
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)
            idx, data = self._get_data()
            self._tasks_outstanding -= 1
            if self._dataset_kind == _DatasetKind.Iterable and \
                    isinstance(data, worker._IterableDatasetStopIteration):
                if self._persistent_workers:
                    self._workers_status[data.worker_id] = False
                else:
                    self._mark_worker_as_unavailable(data.worker_id)
                self._try_put_index()
                continue
            if idx != self._rcvd_idx:
                if not self._in_order:
                    return self._process_data(data, self._task_info.pop(idx)[0])
                self._task_info[idx] += (data,)  # kept until its turn
            else:
                worker_id = self._task_info.pop(idx)[0]
                self._rcvd_idx += 1
                return self._process_data(data, worker_id)

    def _try_put_index(self):
        max_tasks = self._prefetch_factor * self._num_workers
        try:
            index = self._next_index()
        except StopIteration:
            return
        for _ in range(self._num_workers):  # the next worker still working, if any
            worker_queue_idx = next(self._worker_queue_idx_cycle)
            if self._workers_status[worker_queue_idx]:
                if self._in_order or self._workers_num_tasks[worker_queue_idx] < max_tasks // sum(
                        self._workers_status):
                    break
        else:
            return
        self._index_queues[worker_queue_idx].put((self._send_idx, index))
        self._task_info[self._send_idx] = (worker_queue_idx,)
        self._workers_num_tasks[worker_queue_idx] += 1
        self._tasks_outstanding += 1
        self._send_idx += 1

    def _process_data(self, data, worker_idx):
        self._workers_num_tasks[worker_idx] -= 1
        self._try_put_index()
        if isinstance(data, ExceptionWrapper):
            data.reraise()
        return data

    def _mark_worker_as_unavailable(self, worker_id, shutdown=False):
        self._index_queues[worker_id].put(None)
        self._workers_status[worker_id] = False

    def _shutdown_workers(self):
        if getattr(self, "_shutdown", True) or not hasattr(self, "_workers") or _python_exiting:
            return
        self._shutdown = True
        try:
            self._workers_done_event.set()
            for worker_id in range(len(self._workers)):
                if self._persistent_workers or self._workers_status[worker_id]:
                    self._mark_worker_as_unavailable(worker_id, shutdown=True)
            for w in self._workers:
                w.join(timeout=MP_STATUS_CHECK_INTERVAL)
            for q in self._index_queues:
                q.cancel_join_thread()
                q.close()
        finally:
            _index_queues_of.pop(id(self), None)
            for w in self._workers:
                if w.is_alive():
                    w.terminate()
                    w.join(timeout=MP_STATUS_CHECK_INTERVAL)

    def __del__(self):
        self._shutdown_workers()
