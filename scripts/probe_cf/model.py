"""RedisBloom's cuckoo filter as observed (hash, fingerprint, buckets, eviction with rollback,
deletes with auto-compaction, CF.COMPACT). The probe replays random operations on the server
and on this model and compares every reply and the SCANDUMP bytes."""

MASK = (1 << 64) - 1
M64 = 0xC6A4A7935BD1E995


def murmur64a(key, seed=0):
    h = (seed ^ (len(key) * M64)) & MASK
    n8 = len(key) // 8
    for i in range(n8):
        k = int.from_bytes(key[8 * i:8 * i + 8], "little")
        k = (k * M64) & MASK
        k ^= k >> 47
        k = (k * M64) & MASK
        h ^= k
        h = (h * M64) & MASK
    tail = key[8 * n8:]
    if tail:
        for i, b in enumerate(tail):
            h ^= b << (8 * i)
        h = (h * M64) & MASK
    h ^= h >> 47
    h = (h * M64) & MASK
    return h ^ (h >> 47)


def next_pow2(n):
    n = (n - 1) & MASK
    for s in (1, 2, 4, 8, 16, 32):
        n |= n >> s
    return (n + 1) & MASK


def alt_index(fp, index):
    return (index ^ (fp * 0x5BD1E995)) & MASK


def lookup(item):
    h = murmur64a(item)
    fp = h % 255 + 1
    return h, alt_index(fp, h), fp


class Model:
    def __init__(self, capacity, bucket=2, iterations=20, expansion=1):
        self.bs, self.mi, self.ex = bucket, iterations, next_pow2(expansion)
        self.nb = max(1, next_pow2(capacity // bucket))
        self.items = self.deletes = 0
        self.filters = []  # [(numBuckets, bytearray)]
        self.grow()

    def grow(self):
        nb = self.nb * self.ex ** len(self.filters)
        self.filters.append((nb, bytearray(nb * self.bs)))

    def slots(self, nb, h):
        start = (h % nb) * self.bs
        return range(start, start + self.bs)

    def free_slot(self, f, h1, h2):
        nb, data = f
        for h in (h1, h2):
            for p in self.slots(nb, h):
                if data[p] == 0:
                    return p
        return None

    def kick(self, f, h1, fp):
        nb, data = f
        bs, victim, ii = self.bs, 0, h1 % nb
        for _ in range(self.mi):
            p = ii * bs + victim
            data[p], fp = fp, data[p]
            ii = alt_index(fp, ii) % nb
            for p in range(ii * bs, ii * bs + bs):
                if data[p] == 0:
                    data[p] = fp
                    return True
            victim = (victim + 1) % bs
        for _ in range(self.mi):  # roll the evictions back
            victim = (victim + bs - 1) % bs
            ii = alt_index(fp, ii) % nb
            p = ii * bs + victim
            data[p], fp = fp, data[p]
        return False

    def insert(self, h1, h2, fp):
        for f in reversed(self.filters):
            p = self.free_slot(f, h1, h2)
            if p is not None:
                f[1][p] = fp
                self.items += 1
                return 1
        if self.kick(self.filters[-1], h1, fp):
            self.items += 1
            return 1
        if self.ex == 0:
            return -1
        self.grow()
        return self.insert(h1, h2, fp)

    def check(self, item):
        h1, h2, fp = lookup(item)
        return int(any(fp in data[(h % nb) * self.bs:(h % nb) * self.bs + self.bs]
                       for nb, data in self.filters for h in (h1, h2)))

    def count(self, item):
        h1, h2, fp = lookup(item)
        return sum(data[(h % nb) * self.bs:(h % nb) * self.bs + self.bs].count(fp)
                   for nb, data in self.filters for h in (h1, h2))

    def add(self, item):
        return self.insert(*lookup(item))

    def addnx(self, item):
        return 0 if self.check(item) else self.add(item)

    def delete(self, item):
        h1, h2, fp = lookup(item)
        for nb, data in reversed(self.filters):
            for h in (h1, h2):
                for p in self.slots(nb, h):
                    if data[p] == fp:
                        data[p] = 0
                        self.items -= 1
                        self.deletes += 1
                        if len(self.filters) > 1 and self.deletes > self.items * 0.10:
                            self.compact(False)
                        return 1
        return 0

    def compact_one(self, fi):
        nb, data = self.filters[fi]
        ok = True
        for bi in range(nb):
            for p in range(bi * self.bs, bi * self.bs + self.bs):
                fp = data[p]
                if not fp:
                    continue
                for f in self.filters[:fi]:
                    q = self.free_slot(f, bi, alt_index(fp, bi))
                    if q is not None:
                        f[1][q] = fp
                        data[p] = 0
                        break
                else:
                    ok = False
        if ok and fi == len(self.filters) - 1:
            self.filters.pop()
        return ok

    def compact(self, keep_going=True):
        for fi in range(len(self.filters) - 1, 0, -1):
            if not self.compact_one(fi) and not keep_going:
                break
        self.deletes = 0

    def data(self):
        return b"".join(bytes(d) for _, d in self.filters)

    def size(self):
        return 40 + 16 * len(self.filters) + sum(len(d) for _, d in self.filters)
