"""The browser view of a simulation (viser): live, and recorded as an HTML replay or a GIF."""

from humanoid_sim.viewer.view_frame import ViewFrame, ViewFrameBuilder
from humanoid_sim.viewer.viewer import PLAYBACK_MODES, Viewer, ViewerConfig
from humanoid_sim.viewer.visuals import VisualShape, collision_visuals, load_visuals

__all__ = [
    "PLAYBACK_MODES",
    "ViewFrame",
    "ViewFrameBuilder",
    "Viewer",
    "ViewerConfig",
    "VisualShape",
    "collision_visuals",
    "load_visuals",
]
