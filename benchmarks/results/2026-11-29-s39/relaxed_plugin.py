"""pytest plugin (session 39, run 3): the tiled copy built with relaxed_cell_layout, so the
tiled and overlay GPU tests run on it. Load with -p relaxed_plugin."""
from morphgpu import reorder
from morphgpu.bfs.gpu import tiled

tiled._layout = lambda g, tile: reorder.relaxed_cell_layout(g, tile * 3 // 4, tile)
