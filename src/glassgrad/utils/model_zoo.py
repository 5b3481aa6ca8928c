"""torch.utils.model_zoo: `load_url` (torch.hub.load_state_dict_from_url) and the progress bar `tqdm`."""
from ..hub import tqdm, load_state_dict_from_url as load_url  # noqa: F401

__all__ = ["load_url", "tqdm"]
