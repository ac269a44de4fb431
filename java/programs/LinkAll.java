import java.net.URI;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.*;
import java.util.*;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * Loads and links every class of the JDK's own modules ("jrt") and of the jars named, so that the JVM
 * verifies each (run it with -Xverify:all, and with cpu=times to verify our rewritten bytecode). Prints
 * one line per VerifyError and a summary: "checked N classes: L linked, V VerifyErrors, E other errors".
 * Linking is forced by getDeclaredMethods(), which links the class without initializing it.
 */
public class LinkAll {
    static int checked, linked, verifyErrors, otherErrors;

    static void link(String name, ClassLoader loader) {
        checked++;
        try {
            Class<?> c = Class.forName(name, false, loader);
            c.getDeclaredMethods();
            linked++;
        } catch (VerifyError e) {
            verifyErrors++;
            System.out.println("VerifyError " + name + ": " + e.getMessage().lines().findFirst().orElse(""));
        } catch (Throwable e) {
            // Missing optional dependencies, access checks between modules: not ours to judge.
            otherErrors++;
        }
    }

    static String className(String path) {
        return path.substring(0, path.length() - ".class".length()).replace('/', '.');
    }

    public static void main(String[] args) throws Exception {
        for (String arg : args) {
            if (arg.equals("jrt")) {
                FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
                List<String> names = new ArrayList<>();
                try (var modules = Files.list(jrt.getPath("/modules"))) {
                    for (Path module : (Iterable<Path>) modules::iterator) {
                        try (var files = Files.walk(module)) {
                            files.map(p -> module.relativize(p).toString())
                                .filter(p -> p.endsWith(".class") && !p.endsWith("module-info.class"))
                                .forEach(p -> names.add(className(p)));
                        }
                    }
                }
                ClassLoader system = ClassLoader.getSystemClassLoader();
                for (String n : names) link(n, system);
            } else {
                try (JarFile jar = new JarFile(arg);
                     URLClassLoader loader = new URLClassLoader(new URL[] {Paths.get(arg).toUri().toURL()})) {
                    for (JarEntry e : Collections.list(jar.entries())) {
                        String p = e.getName();
                        if (p.endsWith(".class") && !p.endsWith("module-info.class") && !p.startsWith("META-INF/")) {
                            link(className(p), loader);
                        }
                    }
                }
            }
        }
        System.out.println("checked " + checked + " classes: " + linked + " linked, " + verifyErrors
                + " VerifyErrors, " + otherErrors + " other errors");
    }
}
