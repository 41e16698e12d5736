"""The live view and its HTML replay, opened in headless Chromium: the robot is drawn."""

import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest

from humanoid_sim.viewer import Viewer, ViewerConfig
from headless_chromium import HeadlessChromium, chromium_path
from standing_scene import URDF, run_steps

pytestmark = pytest.mark.skipif(
    chromium_path() is None, reason="chromium is not installed (scripts/setup.sh installs Debian's chromium)"
)

SCENE_TIMEOUT_S = 90.0  # [s of wall time] for software WebGL on a loaded 2-core machine
# Set to a path (e.g. docs/viewer.png) to keep the live view's screenshot.
SCREENSHOT_ENV = "HUMANOID_SIM_VIEWER_SCREENSHOT"


def robot_pixels(image: np.ndarray, rgb: np.ndarray) -> np.ndarray:
    """Mask of pixels whose colour is the robot's colour under some light: the same hue
    (channel differences in the same proportions) at 35-130 % of its brightness."""
    pixels = image[..., :3].astype(float)
    ref = np.asarray(rgb, dtype=float)
    brightness = pixels.sum(axis=-1) / ref.sum()
    ok = (brightness > 0.35) & (brightness < 1.3)
    chroma = pixels - pixels.mean(axis=-1, keepdims=True)
    ref_chroma = (ref - ref.mean()) * brightness[..., None]
    return ok & (np.abs(chroma - ref_chroma).max(axis=-1) < 12.0) & (chroma[..., 0] - chroma[..., 2] > 15.0)


def central(mask: np.ndarray) -> np.ndarray:
    """The region the robot is drawn in: the camera looks at its centre of mass."""
    h, w = mask.shape
    return mask[int(0.15 * h) : int(0.85 * h), int(0.3 * w) : int(0.6 * w)]


def wait_for_robot(browser: HeadlessChromium, path: Path, rgb: np.ndarray, minimum: int = 1500) -> np.ndarray:
    """Screenshots until the robot's colour covers ``minimum`` pixels of the central region."""
    import imageio.v3 as iio

    deadline = time.monotonic() + SCENE_TIMEOUT_S
    while True:
        time.sleep(2.0)
        image = iio.imread(browser.screenshot(path))
        mask = robot_pixels(image, rgb)
        if central(mask).sum() >= minimum or time.monotonic() > deadline:
            return mask


def test_live_view_and_replay_draw_the_robot_in_chromium(standing, tmp_path):
    sim, controller = standing
    viewer = Viewer(sim, URDF, ViewerConfig(port=0, playback="fast", record=True))
    skin = np.round(viewer.visuals[0].rgba[:3] * 255.0)
    try:
        assert viewer.url.startswith("http://127.0.0.1:")
        run_steps(sim, controller, viewer, 2000)
        with HeadlessChromium() as browser:
            browser.open(viewer.url)
            mask = wait_for_robot(browser, tmp_path / "live.png", skin)
            assert central(mask).sum() >= 1500, f"robot colour on {central(mask).sum()} central pixels only"
            assert central(mask).sum() > 0.8 * mask.sum(), "the robot is drawn outside the expected region"
            target = os.environ.get(SCREENSHOT_ENV)
            if target:
                shutil.copy(tmp_path / "live.png", target)
    finally:
        viewer.close()
    replay = viewer.save_replay(tmp_path / "replay.html")
    with HeadlessChromium() as browser:  # a file: URL, no server running
        browser.open(replay.resolve().as_uri())
        time.sleep(5.0)
        # the replay loops, and fades its scene in again at each start: software WebGL draws a few
        # frames per second, too few to finish the fade in a 2 s loop. Paused (space bar), it does.
        browser.press_space()
        mask = wait_for_robot(browser, tmp_path / "replay.png", skin)
        assert central(mask).sum() >= 1500, f"replay: robot colour on {central(mask).sum()} central pixels only"


def test_robot_pixels_finds_shaded_skin_and_nothing_on_a_blank_page():
    skin = np.array([204.0, 178.0, 153.0])
    image = np.full((40, 40, 3), 255, dtype=np.uint8)  # a blank page
    assert robot_pixels(image, skin).sum() == 0
    image[10:20, 10:20] = np.round(skin * 0.7)  # skin in shadow
    image[20:30, 10:20] = (236, 236, 232)  # ground
    image[30:40, 10:20] = (120, 140, 170)  # an environment box
    assert robot_pixels(image, skin).sum() == 100
