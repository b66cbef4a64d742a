package io.kubeverdict.testbed;

/** A port a pod listens on, like one containerPort of a Pod manifest. */
public record ServePort(int port, Protocol protocol) {
    public ServePort {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("port out of range: " + port);
        }
    }

    /** Parses "80/TCP" or "53/udp"; the protocol defaults to TCP like in Kubernetes. */
    public static ServePort parse(String text) {
        int slash = text.indexOf('/');
        if (slash < 0) {
            return new ServePort(Integer.parseInt(text.trim()), Protocol.TCP);
        }
        return new ServePort(Integer.parseInt(text.substring(0, slash).trim()), Protocol.parse(text.substring(slash + 1)));
    }

    @Override
    public String toString() {
        return port + "/" + protocol;
    }
}
