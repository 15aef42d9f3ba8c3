"""A random-waypoint contact trace: n walkers in the unit square, in contact when closer
than a radius.

Each node moves in a straight line at its own speed (uniform in ``[vmin, vmax]`` per
leg) towards a waypoint drawn uniformly in the square, pauses there for a random number
of ticks, and draws the next waypoint. At every tick ``t`` the pairs closer than
``radius`` are in contact: the CSV has one row ``t,u,v`` per contact (``u < v``), the
edges available at time ``t`` (``netdp simulate --topology FILE --format contacts``).
The union of the contacts must be connected; the script raises the radius by 10 % until
it is (and says so).

    python experiments/mobility_contacts.py --nodes 200 --ticks 400 --out contacts.csv
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np


def random_waypoint(n: int, ticks: int, radius: float, vmin: float, vmax: float,
                    pause: int, rng: np.random.Generator) -> tuple[list[np.ndarray],
                                                               np.ndarray]:
    """The contacts of every tick (``(m, 2)`` arrays of pairs ``u < v``) and ``(ticks, n,
    2)`` positions."""
    from scipy.spatial import cKDTree

    pos = rng.random((n, 2))
    goal = rng.random((n, 2))
    speed = rng.uniform(vmin, vmax, n)
    wait = np.zeros(n, dtype=np.int64)
    contacts, track = [], np.empty((ticks, n, 2))
    for t in range(ticks):
        track[t] = pos
        pairs = cKDTree(pos).query_pairs(radius, output_type="ndarray")
        contacts.append(np.sort(pairs, axis=1) if pairs.size else np.zeros((0, 2), int))
        moving = wait == 0
        step = goal - pos
        dist = np.linalg.norm(step, axis=1)
        arrive = moving & (dist <= speed)
        go = moving & ~arrive
        pos[go] += step[go] * (speed[go] / dist[go])[:, None]
        pos[arrive] = goal[arrive]
        wait[arrive] = rng.integers(0, pause + 1, int(arrive.sum()))
        wait[~moving] -= 1
        renew = arrive  # a new leg after the pause
        goal[renew] = rng.random((int(renew.sum()), 2))
        speed[renew] = rng.uniform(vmin, vmax, int(renew.sum()))
    return contacts, track


def connected(n: int, contacts: list[np.ndarray]) -> bool:
    """Whether the union of the contacts connects all ``n`` nodes."""
    from scipy import sparse
    from scipy.sparse.csgraph import connected_components

    pairs = np.concatenate(contacts) if contacts else np.zeros((0, 2), int)
    adj = sparse.coo_array((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    return connected_components(adj, directed=False)[0] == 1


def write(path: Path, contacts: list[np.ndarray]) -> int:
    """Write ``t,u,v`` rows; the number of rows."""
    rows = 0
    with path.open("w") as fh:
        fh.write("t,u,v\n")
        for t, pairs in enumerate(contacts):
            for u, v in pairs.tolist():
                fh.write(f"{t},{u},{v}\n")
            rows += len(pairs)
    return rows


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=200)
    ap.add_argument("--ticks", type=int, default=400)
    ap.add_argument("--radius", type=float, default=0.08)
    ap.add_argument("--vmin", type=float, default=0.005)
    ap.add_argument("--vmax", type=float, default=0.02)
    ap.add_argument("--pause", type=int, default=5)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path("contacts.csv"))
    args = ap.parse_args(argv)
    radius = args.radius
    while True:
        rng = np.random.default_rng(args.seed)
        contacts, track = random_waypoint(args.nodes, args.ticks, radius, args.vmin,
                                          args.vmax, args.pause, rng)
        if connected(args.nodes, contacts):
            break
        radius *= 1.1
        print(f"the union of the contacts is not connected: radius raised to {radius:.4f}")
    rows = write(args.out, contacts)
    np.save(args.out.with_suffix(".positions.npy"), track)
    per_tick = rows / args.ticks
    print(f"{args.out}: {rows} contacts over {args.ticks} ticks ({per_tick:.1f} per tick, "
          f"mean degree {2 * per_tick / args.nodes:.2f}); radius {radius:.4f}; positions in "
          f"{args.out.with_suffix('.positions.npy')}")


if __name__ == "__main__":
    main()
