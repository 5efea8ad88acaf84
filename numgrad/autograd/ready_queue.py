"""The backward engine's ready queue, ordered exactly as torch's: a binary heap on the nodes' sequence numbers
(the highest runs first) that breaks ties the way libstdc++'s std::priority_queue does, which decides, say,
whether a leaf's gradient is written before an error node raises (both have the largest number)."""


class ReadyQueue:
    __slots__ = ("heap",)

    def __init__(self):
        self.heap = []

    def __bool__(self):
        return bool(self.heap)

    def push(self, node):
        heap = self.heap
        heap.append(node)
        _sift_up(heap, len(heap) - 1, node)

    def pop(self):
        """The node with the highest sequence number (std::pop_heap then pop_back)."""
        heap = self.heap
        top, last = heap[0], heap.pop()
        n = len(heap)
        if n:  # __adjust_heap: move the hole at the top down to a leaf along the larger children, then sift up
            hole = child = 0
            while child < (n - 1) // 2:
                child = 2 * (child + 1)
                if heap[child]._seq < heap[child - 1]._seq:
                    child -= 1
                heap[hole] = heap[child]
                hole = child
            if n % 2 == 0 and child == (n - 2) // 2:
                child = 2 * (child + 1)
                heap[hole] = heap[child - 1]
                hole = child - 1
            _sift_up(heap, hole, last)
        return top


def _sift_up(heap, hole, node):
    """std::__push_heap: moves `node` up from `hole` while its parent has a lower number."""
    seq = node._seq
    while hole > 0:
        parent = (hole - 1) // 2
        if not heap[parent]._seq < seq:
            break
        heap[hole] = heap[parent]
        hole = parent
    heap[hole] = node
