package io.kubeverdict.agent.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A throwaway CA and certificates made with the openssl command, for mTLS tests. */
public final class TestPki {
    private final Path dir;

    public TestPki(Path dir) {
        this.dir = dir;
    }

    public static boolean available() {
        try {
            return new ProcessBuilder("openssl", "version").start().waitFor() == 0;
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    /** Makes NAME-ca.pem / NAME-ca.key. */
    public Path ca(String name) throws Exception {
        run("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                "-keyout", file(name + "-ca.key").toString(), "-out", file(name + "-ca.pem").toString(),
                "-days", "2", "-subj", "/CN=" + name + " test CA");
        return file(name + "-ca.pem");
    }

    /** Makes NAME.pem and NAME.key (PKCS#8) signed by CA; san like "IP:127.0.0.1" or "DNS:node-1". */
    public Path leaf(String name, String caName, String subjectCn, String san) throws Exception {
        Path key = file(name + ".key");
        run("openssl", "genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key.toString());
        run("openssl", "req", "-new", "-key", key.toString(), "-out", file(name + ".csr").toString(), "-subj", "/CN=" + subjectCn);
        Files.writeString(file(name + ".ext"), "subjectAltName=" + san + "\n");
        run("openssl", "x509", "-req", "-in", file(name + ".csr").toString(), "-CA", file(caName + "-ca.pem").toString(),
                "-CAkey", file(caName + "-ca.key").toString(), "-CAcreateserial", "-days", "2",
                "-extfile", file(name + ".ext").toString(), "-out", file(name + ".pem").toString());
        return file(name + ".pem");
    }

    public Path file(String name) {
        return dir.resolve(name);
    }

    private static void run(String... command) throws Exception {
        Process p = new ProcessBuilder(new ArrayList<>(List.of(command))).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", command) + " failed: " + out);
        }
    }
}
