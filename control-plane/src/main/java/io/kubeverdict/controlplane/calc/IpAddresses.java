package io.kubeverdict.controlplane.calc;

import io.kubeverdict.policy.IpAddress;
import java.util.Optional;

/**
 * IP literals and CIDRs as the calculation needs them (bytes, host bits cleared). Literals are
 * parsed and formatted by the verdict function's {@link IpAddress}, so what the control plane
 * writes into a snapshot is exactly what the agent reads back.
 */
public final class IpAddresses {
    private IpAddresses() {}

    /** The address bytes (4 or 16), or empty when the text is not an IP literal. */
    public static Optional<byte[]> parse(String text) {
        IpAddress a = IpAddress.tryParse(text);
        return a == null ? Optional.empty() : Optional.of(bytes(a));
    }

    /** The canonical text of an IP literal, or empty when it is not one. */
    public static Optional<String> canonical(String text) {
        return Optional.ofNullable(IpAddress.tryParse(text)).map(IpAddress::toString);
    }

    public static String format(byte[] b) {
        return address(b).toString();
    }

    private static byte[] bytes(IpAddress a) {
        byte[] out = new byte[a.family() == IpAddress.V4 ? 4 : 16];
        if (out.length == 4) {
            for (int i = 0; i < 4; i++) {
                out[i] = (byte) (a.lo() >>> (24 - 8 * i));
            }
        } else {
            for (int i = 0; i < 8; i++) {
                out[i] = (byte) (a.hi() >>> (56 - 8 * i));
                out[i + 8] = (byte) (a.lo() >>> (56 - 8 * i));
            }
        }
        return out;
    }

    private static IpAddress address(byte[] b) {
        if (b.length == 4) {
            return IpAddress.v4(((b[0] & 0xff) << 24) | ((b[1] & 0xff) << 16) | ((b[2] & 0xff) << 8) | (b[3] & 0xff));
        }
        long hi = 0;
        long lo = 0;
        for (int i = 0; i < 8; i++) {
            hi = (hi << 8) | (b[i] & 0xff);
            lo = (lo << 8) | (b[i + 8] & 0xff);
        }
        return IpAddress.v6(hi, lo);
    }

    /** A parsed CIDR with host bits cleared. */
    public record Cidr(byte[] network, int prefixLength) {
        public boolean contains(Cidr other) {
            if (other.network.length != network.length || other.prefixLength < prefixLength) {
                return false;
            }
            return java.util.Arrays.equals(mask(other.network, prefixLength), network);
        }

        public boolean contains(byte[] address) {
            return address.length == network.length
                    && java.util.Arrays.equals(mask(address, prefixLength), network);
        }

        @Override
        public String toString() {
            return format(network) + "/" + prefixLength;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Cidr c && c.prefixLength == prefixLength
                    && java.util.Arrays.equals(c.network, network);
        }

        @Override
        public int hashCode() {
            return java.util.Arrays.hashCode(network) * 31 + prefixLength;
        }
    }

    /**
     * Parses "address/length". Host bits are cleared, as Kubernetes (Go's ParseCIDR) does, so
     * "10.0.0.1/24" means 10.0.0.0/24.
     */
    public static Optional<Cidr> parseCidr(String text) {
        if (text == null) {
            return Optional.empty();
        }
        int slash = text.indexOf('/');
        if (slash <= 0 || slash == text.length() - 1) {
            return Optional.empty();
        }
        byte[] addr = parse(text.substring(0, slash)).orElse(null);
        if (addr == null) {
            return Optional.empty();
        }
        String lenText = text.substring(slash + 1);
        if (lenText.length() > 3 || !lenText.chars().allMatch(Character::isDigit)
                || (lenText.length() > 1 && lenText.charAt(0) == '0')) {
            return Optional.empty();
        }
        int len = Integer.parseInt(lenText);
        if (len > addr.length * 8) {
            return Optional.empty();
        }
        return Optional.of(new Cidr(mask(addr, len), len));
    }

    static byte[] mask(byte[] addr, int len) {
        byte[] out = addr.clone();
        for (int i = 0; i < out.length; i++) {
            int bits = Math.max(0, Math.min(8, len - 8 * i));
            out[i] = (byte) (out[i] & (0xff00 >> bits));
        }
        return out;
    }
}
