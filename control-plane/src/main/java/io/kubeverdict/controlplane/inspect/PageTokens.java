// SPDX-License-Identifier: Apache-2.0
package io.kubeverdict.controlplane.inspect;

import java.nio.charset.StandardCharsets;
import java.util.Base64;

/**
 * ListNodes page tokens: the last node name of the previous page, opaque to clients (base64url
 * with a version prefix), so the next page continues after it whatever changed meanwhile.
 */
final class PageTokens {
    private static final String VERSION = "n1:";
    /** Node names are at most 253 characters; anything much longer is not ours. */
    private static final int MAX_TOKEN = 400;

    private PageTokens() {}

    static String encode(String lastNode) {
        return Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString((VERSION + lastNode).getBytes(StandardCharsets.UTF_8));
    }

    /** The node name to continue after; null for an empty (first-page) token. */
    static String decode(String token) {
        if (token.isEmpty()) {
            return null;
        }
        if (token.length() > MAX_TOKEN) {
            throw new IllegalArgumentException("page_token is not one this server issued");
        }
        String text;
        try {
            text = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("page_token is not one this server issued");
        }
        if (!text.startsWith(VERSION)) {
            throw new IllegalArgumentException("page_token is not one this server issued");
        }
        return text.substring(VERSION.length());
    }
}
