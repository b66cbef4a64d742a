// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.sandbox;

import static org.assertj.core.api.Assertions.assertThat;

import io.kubeverdict.testbed.ServePort;
import io.kubeverdict.testing.tier.EndToEndTest;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.TakesScreenshot;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.support.ui.WebDriverWait;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * The web console in a real browser (Debian's headless chromium through its chromedriver) against
 * a running sandbox, reached through the sandbox's port-forward like {@code sandbox --keep
 * --console}: the map shows the pods, probing adds a red edge whose click explains the deciding
 * policy, the matrix equals {@code matrix --control-plane}'s, a hostile pod name is text, and the
 * nodes view lists the agents. Screenshots go to target/console-screenshots.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@EndToEndTest
class ConsoleEndToEndTest {
    static final ServePort TCP80 = ServePort.parse("80/TCP");
    static final String HOSTILE = "<img src=x onerror=\"window.kvHostile=1\">";
    private static final Duration BOUND = Duration.ofSeconds(90);
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final Path SHOTS = Path.of("target", "console-screenshots");

    static final String CLUSTER = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: shop}
            ---
            apiVersion: v1
            kind: Namespace
            metadata: {name: guest}
            """ + LifecycleEndToEndTest.pod("shop", "web", "node-1", "10.244.1.10", "Running")
            + LifecycleEndToEndTest.pod("shop", "db", "node-2", "10.244.2.10", "Running")
            + LifecycleEndToEndTest.pod("guest", "visitor", "node-1", "10.244.1.20", "Running")
            + """
            ---
            apiVersion: v1
            kind: Pod
            metadata: {namespace: guest, name: '%s', labels: {pod: hostile}}
            spec: {nodeName: node-2, containers: [{name: c, image: i, ports: [{containerPort: 80}]}]}
            status: {phase: Running, podIPs: [{ip: 10.244.2.20}]}
            """.formatted(HOSTILE)
            + "---\n"
            + NetpolEndToEndTest.policy("shop", "shop-only", """
                podSelector: {}
                policyTypes: [Ingress]
                ingress:
                - from:
                  - podSelector: {}
                """)
            + """
            ---
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata:
              namespace: guest
              name: guest-lockdown
              annotations: {kube-verdict.io/staged: "true"}
            spec: {podSelector: {}, policyTypes: [Ingress]}
            """;

    private Path manifests;
    private Sandbox sandbox;
    private ChromeDriver browser;
    private String url;

    @BeforeAll
    void start() throws Exception {
        TestLaunch.useTestClassPath();
        manifests = Files.createTempDirectory("kvt-e2e-console-");
        Files.writeString(manifests.resolve("cluster.yaml"), CLUSTER);
        sandbox = Sandbox.start(
                new SandboxOptions(
                        manifests, 2, List.of(TCP80), Placement.DEFAULT_POD_CIDR, Duration.ofMillis(1200), "kvt-sc-"),
                new Progress(new java.io.PrintWriter(System.err, true)));
        url = sandbox.forwardConsole(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Files.createDirectories(SHOTS);
        ChromeOptions options = new ChromeOptions()
                .setBinary("/usr/bin/chromium")
                .addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1500,1000");
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(Path.of("/usr/bin/chromedriver").toFile())
                .build();
        browser = new ChromeDriver(service, options);
        browser.get(url);
    }

    @AfterAll
    void stop() throws Exception {
        if (browser != null) {
            browser.quit();
        }
        if (sandbox != null) {
            sandbox.close();
        }
        try (Stream<Path> walk = Files.walk(manifests)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private WebDriverWait waiting() {
        return new WebDriverWait(browser, BOUND, Duration.ofMillis(200));
    }

    private Object js(String script, Object... args) {
        return ((JavascriptExecutor) browser).executeScript(script, args);
    }

    private void screenshot(String name) throws IOException {
        byte[] png = ((TakesScreenshot) browser).getScreenshotAs(OutputType.BYTES);
        Files.write(SHOTS.resolve(name + ".png"), png);
    }

    /** The red edge from -> to once it shows within {@code within}, else null. */
    private WebElement deniedEdge(String from, String to, Duration within) {
        try {
            return new WebDriverWait(browser, within, Duration.ofMillis(100)).until(d -> (WebElement) js(
                    "return [...document.querySelectorAll('path.edge.denied')]"
                            + ".find(e => e.dataset.from === arguments[0] && e.dataset.to === arguments[1]) || null",
                    from,
                    to));
        } catch (org.openqa.selenium.TimeoutException e) {
            return null;
        }
    }

    @Test
    @Order(1)
    void theMapShowsTheExamplesPods() throws Exception {
        for (String pod : List.of("shop/web", "shop/db", "guest/visitor")) {
            waiting().until(d -> (Boolean) js(
                    "return [...document.querySelectorAll('circle.pod')].some(c => c.dataset.name === arguments[0])",
                    pod));
        }
        assertThat(browser.findElement(By.id("map-summary")).getText()).contains("4 pods");
    }

    @Test
    @Order(2)
    void aDeniedConnectionAddsARedEdgeAndItsClickShowsTheDecidingPolicy() throws Exception {
        waiting().until(d -> d.findElement(By.id("stream-status")).getText().startsWith("live"));
        // Every pair on port 80: guest/visitor -> shop/web is denied by shop/shop-only.
        // The agents start uploading once the relay tells them someone watches: a probe made before
        // that is not seen, so probe again (denies are never cached) until the edge shows, within the bound.
        long probing = System.nanoTime();
        long probed = 0;
        WebElement edge = null;
        long end = probing + BOUND.toNanos();
        while (edge == null) {
            assertThat(System.nanoTime() - end)
                    .as("a red edge guest/visitor -> shop/web; flows: "
                            + browser.findElement(By.id("flow-rows")).getText())
                    .isNegative();
            sandbox.probe(List.of(TCP80));
            probed = probed == 0 ? System.nanoTime() : probed;
            edge = deniedEdge("guest/visitor", "shop/web", Duration.ofSeconds(5));
        }
        long shown = System.nanoTime();
        // Figures for the notes, not asserted: the page's load, the probe's own run, the time to the red edge.
        System.err.printf(
                "console: page load %s ms; probe run %d ms, red edge %d ms after the probe began%n",
                js("return Math.round(performance.getEntriesByType('navigation')[0].loadEventEnd)"),
                (probed - probing) / 1_000_000,
                (shown - probing) / 1_000_000);
        assertThat(edge.getAttribute("class")).contains("denied");
        js("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", edge);
        waiting().until(d -> d.findElements(By.id("explain-text")).size() == 1);
        assertThat(browser.findElement(By.id("explain-verdict")).getText()).isEqualTo("DENIED");
        assertThat(browser.findElement(By.id("explain-text")).getText())
                .contains("guest/visitor")
                .contains("shop/web")
                .contains("shop-only");
        assertThat(browser.findElement(By.id("flow-rows")).getText()).contains("denied");
        screenshot("flows");
    }

    @Test
    @Order(3)
    void aPolicyNamedInTheExplanationLinksToItsYaml() throws Exception {
        WebElement link = waiting()
                .until(d -> (WebElement) js("return [...document.querySelectorAll('#panel a.policy-link')]"
                        + ".find(a => a.dataset.name === 'shop/shop-only') || null"));
        assertThat(link.getAttribute("data-tier")).isEqualTo("default");
        link.click();
        waiting().until(d -> d.findElements(By.id("policy-yaml")).size() == 1);
        assertThat(browser.findElement(By.id("policy-head")).getText())
                .startsWith("NetworkPolicy shop/shop-only")
                .doesNotContain("staged");
        assertThat(browser.findElement(By.id("policy-yaml")).getText())
                .contains("kind: \"NetworkPolicy\"")
                .contains("name: \"shop-only\"")
                .contains("namespace: \"shop\"")
                .contains("podSelector: {}");
        screenshot("policy");
    }

    @Test
    @Order(4)
    void aStagedPolicyThatWouldDenyDrawsAWouldDenyEdge() throws Exception {
        waiting().until(d -> d.findElement(By.id("stream-status")).getText().startsWith("live"));
        // Every connection to a guest pod is allowed (guest is open) and guest/guest-lockdown, staged,
        // would deny it. Which of them reach the page varies (uploads are sampled, some are lost): any will do.
        WebElement edge = null;
        long end = System.nanoTime() + BOUND.toNanos();
        while (edge == null) {
            assertThat(System.nanoTime() - end)
                    .as("a would-deny edge to a guest pod; flows: "
                            + browser.findElement(By.id("flow-rows")).getText())
                    .isNegative();
            sandbox.probe(List.of(TCP80));
            try {
                edge = new WebDriverWait(browser, Duration.ofSeconds(5), Duration.ofMillis(100))
                        .until(
                                d -> (WebElement)
                                        js(
                                                "return [...document.querySelectorAll('path.edge')]"
                                                        + ".find(e => e.dataset.kind === 'would-deny' && e.dataset.to.startsWith('guest/')) || null"));
            } catch (org.openqa.selenium.TimeoutException e) {
                // probe again
            }
        }
        assertThat(edge.getAttribute("data-verdict")).isEqualTo("allowed");
        assertThat(edge.findElement(By.tagName("title")).getAttribute("textContent"))
                .contains("would deny by staged guest/guest-lockdown");
        assertThat(js("return document.querySelector('#legend [data-kind=\"would-deny\"] .legend-count').textContent"))
                .isNotEqualTo("0");
        assertThat(browser.findElement(By.id("flow-rows")).getText()).contains("would-deny");
        js("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", edge);
        waiting().until(d -> d.findElements(By.id("explain-staged")).size() == 1);
        WebElement staged = browser.findElement(By.id("explain-staged"));
        assertThat(staged.getText()).startsWith("would deny by staged guest/guest-lockdown");
        assertThat(browser.findElement(By.id("explain-verdict")).getText()).isEqualTo("ALLOWED");
        staged.findElement(By.cssSelector("a.policy-link")).click();
        waiting().until(d -> d.findElements(By.id("policy-yaml")).size() == 1);
        assertThat(browser.findElement(By.id("policy-head")).getText()).contains("(staged)");
        assertThat(browser.findElement(By.id("policy-yaml")).getText())
                .contains("kube-verdict.io/staged: \"true\"")
                .contains("name: \"guest-lockdown\"");
        screenshot("staged");
        // The verdict filter keeps only the would-deny edges.
        new org.openqa.selenium.support.ui.Select(browser.findElement(By.id("f-verdict"))).selectByValue("would-deny");
        try {
            waiting().until(d -> (Boolean) js("const kinds = [...document.querySelectorAll('path.edge')]"
                    + ".map(e => e.dataset.kind); return kinds.length > 0 && kinds.every(k => k === 'would-deny')"));
        } finally {
            new org.openqa.selenium.support.ui.Select(browser.findElement(By.id("f-verdict"))).selectByValue("");
        }
    }

    @Test
    @Order(5)
    void aHostilePodNameIsText() throws Exception {
        waiting().until(d -> (Boolean) js(
                "return [...document.querySelectorAll('circle.pod')].some(c => c.dataset.name === arguments[0])",
                "guest/" + HOSTILE));
        assertThat(js("return [...document.querySelectorAll('text.pod-label')].map(t => t.textContent).join('\\n')")
                        .toString())
                .contains("guest/<img src=x");
        assertThat(browser.findElements(By.tagName("img")))
                .as("no element made of a name")
                .isEmpty();
        assertThat(js("return window.kvHostile === undefined")).isEqualTo(true);
    }

    @Test
    @Order(6)
    void theMatrixEqualsTheCliMatrix() throws Exception {
        browser.findElement(By.id("tab-matrix")).click();
        browser.findElement(By.id("m-run")).click();
        waiting()
                .until(d ->
                        !d.findElements(By.cssSelector("#matrix td[data-from]")).isEmpty());
        @SuppressWarnings("unchecked")
        List<List<Object>> cells =
                (List<List<Object>>) js("return [...document.querySelectorAll('#matrix td[data-from]')]"
                        + ".map(td => [td.dataset.from, td.dataset.to, td.textContent])");
        Map<String, Boolean> page = new TreeMap<>();
        cells.forEach(c -> page.put(c.get(0) + " -> " + c.get(1), c.get(2).equals(".")));

        Process cli = new ProcessBuilder(sandbox.cliCommand("matrix", "-o", "json", "--port", "80"))
                .redirectErrorStream(false)
                .start();
        String out = new String(cli.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(cli.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(cli.exitValue()).as(out).isZero();
        JsonNode allowed = JSON.readTree(out).path("allowed");
        Map<String, Boolean> expected = new TreeMap<>();
        allowed.properties()
                .forEach(row -> row.getValue()
                        .properties()
                        .forEach(cell -> expected.put(
                                row.getKey() + " -> " + cell.getKey(),
                                cell.getValue().asBoolean())));
        assertThat(expected).hasSize(16);
        assertThat(page).isEqualTo(expected);
        assertThat(page).containsEntry("guest/visitor -> shop/web", false);
        screenshot("matrix");
    }

    @Test
    @Order(7)
    void theNodesViewListsEveryAgentInSync() throws Exception {
        browser.findElement(By.id("tab-nodes")).click();
        waiting().until(d -> d.findElements(By.cssSelector("#node-rows tr")).size() == 2);
        for (String node : List.of("node-1", "node-2")) {
            WebElement row = browser.findElement(By.cssSelector("#node-rows tr[data-node='" + node + "']"));
            assertThat(row.findElements(By.tagName("td")).get(2).getText()).isEqualTo("yes");
            WebElement lastContact = row.findElements(By.tagName("td")).get(10);
            assertThat(lastContact.getText())
                    .as("last contact, as status says it")
                    .matches("(\\d+h)?(\\d+m)?\\d+s ago");
            assertThat(lastContact.getAttribute("title")).as("the time itself").endsWith("Z");
        }
        screenshot("nodes");
    }

    @Test
    @Order(8)
    void thePodPanelShowsWhatSelectsThePodAndItsNode() throws Exception {
        browser.findElement(By.id("tab-flows")).click();
        WebElement web = waiting()
                .until(
                        d -> (WebElement)
                                js(
                                        "return [...document.querySelectorAll('circle.pod')].find(c => c.dataset.name === 'shop/web') || null"));
        js("arguments[0].dispatchEvent(new MouseEvent('click', {bubbles: true}))", web);
        waiting().until(d -> d.findElements(By.id("pod-enforcing")).size() == 1);
        String panel = browser.findElement(By.id("panel")).getText();
        assertThat(panel).contains("node node-1").contains("shop-only");
        assertThat(js("return [...document.querySelectorAll('#panel a.policy-link')]"
                        + ".filter(a => a.dataset.tier === 'default' && a.dataset.name === 'shop/shop-only').length"))
                .as("what selects the pod links to its YAML")
                .isEqualTo(1L);
        assertThat(browser.findElement(By.id("pod-enforcing")).getText())
                .isEqualTo("the node enforces its current state");
        screenshot("pod");
    }

    @Test
    @Order(9)
    void aBrokenStreamReconnectsAndSaysSo() throws Exception {
        waiting().until(d -> d.findElement(By.id("stream-status")).getText().startsWith("live"));
        sandbox.killControlPlane();
        try {
            waiting().until(d -> d.findElement(By.id("stream-status")).getText().contains("reconnecting"));
            assertThat(browser.findElement(By.id("stream-status")).getAttribute("class"))
                    .contains("down");
            screenshot("disconnected");
        } finally {
            sandbox.startControlPlane();
        }
        waiting().until(d -> d.findElement(By.id("stream-status")).getText().equals("live (reconnected)"));
        sandbox.awaitConverged();
    }
}
