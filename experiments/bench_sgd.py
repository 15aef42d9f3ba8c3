"""Cost of decentralized SGD: the update kernel, the pair tracker and the calibration.

Usage: python experiments/bench_sgd.py [--nodes 2000 10000] [--steps-per-node 10]

Prints one row per n: model updates per second of the compiled kernel (randhie,
logistic, 8 rows per node at n = 2000), seconds of ``pair_coefficients`` (O(n T)), of the
per-pair ε summary and of the three calibrations. Best of 3 after a warm-up call.

Beside each row, a fresh process runs the command a user types for the same training
(``experiments/_command.py``; one regime, ``network``, calibrated to ε = 10)::

    netdp simulate --task sgd --nodes N --steps 10N --dataset randhie --model logistic \\
        --epsilon 10 --delta 1e-6 --lipschitz 0.4 --lr 0.1 --evals 10 --seed 0

with its wall time, its peak resident memory and its ratio to the kernels timed here (the
updates, the pairs, the summary and the calibrations). ``--no-command`` skips it.
"""

from __future__ import annotations

import argparse
import time

import _command
import numpy as np

from netdp.learning import training_data as datasets
from netdp.learning.models import Model
from netdp.tasks.sgd_walk import learning_rates, walk_sgd
from netdp.tracking import sgd as P


def best(fn, *fn_args, repeat: int = 3) -> float:
    fn(*fn_args)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn(*fn_args)
        times.append(time.perf_counter() - start)
    return min(times)


def calibrate_all(n: int, steps: int, per_node: float) -> list:
    return [P.calibrate(r, 10.0, 1e-6, 0.4, n, steps, per_node, P.expected_cost(1 / n))
            for r in P.REGIMES]


def command(n: int | str, steps: int | str) -> list[str]:
    """The ``netdp simulate`` argv of the training a row times."""
    return ["simulate", "--task", "sgd", "--nodes", str(n), "--steps", str(steps),
            "--dataset", "randhie", "--model", "logistic", "--epsilon", "10",
            "--delta", "1e-6", "--lipschitz", "0.4", "--lr", "0.1", "--evals", "10",
            "--seed", "0"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--nodes", type=int, nargs="+", default=[2000, 10000])
    parser.add_argument("--steps-per-node", type=int, default=10)
    _command.add_arguments(parser)
    args = parser.parse_args()
    with_command = not args.no_command
    rng = np.random.default_rng(0)
    X, y, name = datasets.load("randhie", "logistic", rng)
    model = Model("logistic")
    if with_command:
        print(f"command: {_command.shell_line(command('N', f'{args.steps_per_node}N'))}")
    print(f"{'n':>7}{'T':>10}{'updates/s':>12}{'pairs s':>10}{'summary s':>11}"
          f"{'calibrate s':>13}" + (_command.padded(_command.HEADER) if with_command else ""))
    for n in args.nodes:
        steps = n * args.steps_per_node
        data = datasets.split(X, y, min(n, 16_000), rng, name)
        holders = rng.integers(0, data.n, steps)
        rates = learning_rates(0.1, "constant", steps, data.n)
        t_sgd = best(walk_sgd, holders, data, model, 0.1, 0.4, rates,
                     np.random.default_rng(1), np.inf, None, 10)
        t_pairs = best(P.pair_coefficients, holders, data.n, repeat=1)
        coef = P.pair_coefficients(holders, data.n)
        rho = 2 * 0.16 * coef[~np.eye(data.n, dtype=bool)] / 0.09**2
        t_sum = best(P.epsilon_upper, rho, 1e-6, repeat=1)
        t_cal = best(calibrate_all, n, steps, args.steps_per_node, repeat=1)
        fields = {}
        if with_command:
            fields = _command.beside(command(n, steps), t_sgd + t_pairs + t_sum + t_cal,
                                     args.command_timeout)
        print(f"{n:>7}{steps:>10}{steps / t_sgd:>12.3g}{t_pairs:>10.3f}{t_sum:>11.3f}"
              f"{t_cal:>13.3f}" + (_command.padded(_command.cells(fields)) if with_command
                                   else ""), flush=True)


if __name__ == "__main__":
    main()
