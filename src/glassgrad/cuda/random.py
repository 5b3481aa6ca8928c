"""torch.cuda.random: torch.cuda's RNG functions (defined in cuda/__init__.py, on ops/random's per-device
generators)."""
from . import (  # noqa: F401
    get_rng_state, get_rng_state_all, set_rng_state, set_rng_state_all, manual_seed, manual_seed_all, seed,
    seed_all, initial_seed,
)

__all__ = ['get_rng_state', 'get_rng_state_all', 'set_rng_state', 'set_rng_state_all', 'manual_seed', 'manual_seed_all', 'seed', 'seed_all', 'initial_seed']
