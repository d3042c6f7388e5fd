"""The Space in a real browser: headless Chromium opens the local app, picks a sample image, probes it.

Needs the Debian packages ``chromium`` and ``chromium-driver`` (``.ci/run`` installs them); the
test skips, saying so, only where they are absent. Selenium is given the system chromedriver, so
selenium-manager never downloads anything. Screenshots go to the test's tmp folder (printed).
"""
from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from PIL import Image

from helpers.space import space  # noqa: F401  (fixture)
from lgip_dataset.perturb.registry import HARD

pytestmark = pytest.mark.slow

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
         "--disable-quic", "--no-first-run", "--disable-sync", "--window-size=1400,1000")
WAIT_S = 120


def _browser_paths() -> tuple[str, str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver") or next((p for p in ("/usr/bin/chromedriver",) if Path(p).exists()), None)
    if not chromium or not driver:
        pytest.skip("no Chromium browser and chromedriver on this machine (Debian packages chromium and "
                    "chromium-driver; .ci/run installs them where apt-get is available)")
    return chromium, driver


@pytest.fixture(scope="module")
def browser():
    chromium, driver = _browser_paths()
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tempfile.mkdtemp(prefix="lgip-chromium-")
    options.add_argument(f"--user-data-dir={profile}")
    options.binary_location = chromium
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    session = webdriver.Chrome(service=Service(driver), options=options)
    yield session
    session.quit()
    shutil.rmtree(profile, ignore_errors=True)


def _full_page_screenshot(browser, path: Path) -> Path:
    height = browser.execute_script("return document.documentElement.scrollHeight")
    browser.set_window_size(1400, min(max(height, 1000), 6000))
    browser.save_screenshot(str(path))
    return path


TYPED_CAPTION = "Two dogs are sleeping on a red couch in the kitchen."  # a flip of each hard family


def probe_tab():
    """The Space's ``lgip_space.probe`` (the Space's folder is put on the path by importing its app)."""
    from helpers.space import import_space_app

    import_space_app()
    from lgip_space import probe

    return probe


def _highlighted(browser) -> dict[str, list[str]]:
    """Per category of the variants box's legend, the texts of the highlighted tokens drawn in its colour."""
    from selenium.webdriver.common.by import By

    legend = {item.text.strip(): item.value_of_css_property("background-color")
              for item in browser.find_elements(By.CSS_SELECTOR, "#variants .legend-item")}
    tokens = [(token.text, token.value_of_css_property("background-color"))
              for token in browser.find_elements(By.CSS_SELECTOR, "#variants .token.highlighted")]
    assert len(set(legend.values())) == len(legend)  # one colour per family
    return {name: [text for text, colour in tokens if colour == legend_colour] for name, legend_colour in legend.items()}


def test_probe_in_a_browser(browser, space, tmp_path):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as EC
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, WAIT_S)
    browser.get(space.url)
    thumbnails = wait.until(EC.presence_of_all_elements_located((By.CSS_SELECTOR, "#sample-gallery .thumbnail-item")))
    assert len(thumbnails) == len(space.app.Sample(space.sample_dir).ids)
    thumbnails[1].click()
    caption = wait.until(lambda b: b.find_element(By.CSS_SELECTOR, "#caption textarea").get_attribute("value"))
    browser.find_element(By.CSS_SELECTOR, "#probe-button").click()
    wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "#probe-summary"), "s(I,c)"))
    wait.until(EC.presence_of_element_located((By.CSS_SELECTOR, "#probe-chart img")))
    summary = browser.find_element(By.CSS_SELECTOR, "#probe-summary").text
    variants = browser.find_element(By.CSS_SELECTOR, "#variants").text
    assert "tiny-clip" in summary and "random weights" in summary.lower()
    assert "P1" in variants and "F1" in variants
    # a caption of the visitor's own: by default its hard flips are there, each edit highlighted in its family's
    # colour, with the note beside them
    typed = browser.find_element(By.CSS_SELECTOR, "#caption textarea")
    typed.clear()
    typed.send_keys(TYPED_CAPTION)
    browser.find_element(By.CSS_SELECTOR, "#probe-button").click()
    wait.until(EC.text_to_be_present_in_element((By.CSS_SELECTOR, "#variants"), TYPED_CAPTION.rstrip(".")))
    highlighted = _highlighted(browser)
    expected = {v.type: v.replacement for v in probe_tab().perturb(TYPED_CAPTION, 0).flips}
    assert set(HARD) <= set(expected)
    for family in HARD:
        assert any(expected[family].split()[-1] in text for text in highlighted[family]), (family, highlighted)
    assert "chosen across the whole build" in browser.find_element(By.CSS_SELECTOR, "#hard-note").text
    errors = [e["message"] for e in browser.get_log("browser") if e["level"] == "SEVERE"]
    assert not errors, errors
    probe_png = _full_page_screenshot(browser, tmp_path / "space_probe.png")

    browser.find_element(By.XPATH, "//button[@role='tab' and normalize-space()='Leaderboard']").click()
    wait.until(EC.text_to_be_present_in_element((By.TAG_NAME, "body"), "CLIP ViT-B/16 (OpenAI)"))
    leaderboard_png = _full_page_screenshot(browser, tmp_path / "space_leaderboard.png")
    for path in (probe_png, leaderboard_png):
        assert Image.open(path).size[0] == 1400
        print(f"screenshot: {path}")
    assert caption
